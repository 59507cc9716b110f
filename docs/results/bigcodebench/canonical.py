"""What a BigCodeBench run can score here: every task's canonical solution against its hidden tests and its
docstring's examples, in the sandbox the bench uses, with the interpreter its jobs run (PYCAPSULE_PYTHON).

A task whose canonical solution fails its hidden tests here fails for every answer: the run's ceiling, and
the reasons (a resource limit of the sandbox, no network, data a library downloads on first use...) go in
README. Examples the canonical solution fails (random output, plots, a wrong example) tell the loop that a
right answer is wrong, so it spends every attempt on them.
Usage: PYCAPSULE_PYTHON=VENV/bin/python python3 docs/results/bigcodebench/canonical.py [--limit N] \
         > docs/results/bigcodebench/canonical.md
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.scorer import Score, score
from pycapsule.bench.tasks import BenchTask
from pycapsule.bench.workspace import PromptWorkspace
from pycapsule.config import DEFAULTS
from pycapsule.executor import execute
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.select import open_sandbox


def examples_failed(sandbox: Sandbox, task: BenchTask) -> str:
    """'' when the canonical solution passes its docstring's examples, else why not (one line), judged as
    self-debugging judges an answer (`executor.execute`)."""
    verdict = execute(sandbox, PromptWorkspace(task).capsule(), task.reference, DEFAULTS.job_timeout)
    result = verdict.result
    if result.status != "ok":
        return f"{result.status}: {result.detail}"[:120]
    if verdict.label == "not_verified":
        return f"cannot run here: {verdict.headline}"[:160]
    failed = sum(report.failed for report in result.functions)
    attempted = sum(report.attempted for report in result.functions)
    return f"{failed} of {attempted} failed" if failed else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="the dataset file (default: where the bench finds it)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    tasks = load_tasks("bigcodebench", args.data)[1][: args.limit]
    sandbox = open_sandbox(None, python=os.environ.get("PYCAPSULE_PYTHON"))
    try:
        def run(task: BenchTask) -> tuple[Score, str]:
            verdict, examples = score(sandbox, task, task.reference), examples_failed(sandbox, task)
            print(f"{task.task_id} {verdict.status} {verdict.seconds:.1f}s {verdict.detail[:100]} "
                  f"| examples {examples or 'pass'}", file=sys.stderr)
            return verdict, examples

        with ThreadPoolExecutor(args.workers) as pool:
            checked = dict(zip((t.task_id for t in tasks), pool.map(run, tasks), strict=True))
    finally:
        sandbox.close()
    counts = collections.Counter(verdict.status for verdict, _ in checked.values())
    totals = ", ".join(f"{counts[status]} {status}" for status in ("passed", "failed", "unscorable"))
    wrong_examples = sum(bool(examples) for _, examples in checked.values())
    cannot_run = sum(examples.startswith("cannot run here") for _, examples in checked.values())
    print(f"# BigCodeBench's canonical solutions here ({sandbox.name} sandbox)\n")
    print(f"{len(tasks)} tasks; hidden tests: {totals}; examples fail for {wrong_examples}, of which "
          f"{cannot_run} only for what the sandbox lacks (not fed back to the model).\n")
    print("| task | hidden tests | seconds | why | examples |\n|---|---|---|---|---|")
    for task_id, (verdict, examples) in checked.items():
        if not verdict.passed or examples:
            why = verdict.detail.replace("|", "\\|")[:160]
            print(f"| {task_id} | {verdict.status} | {verdict.seconds:.1f} | {why} | {examples or 'pass'} |")


if __name__ == "__main__":
    main()
