"""What the rule "an example that fails only for what the sandbox lacks is not fed back" changes in a
finished self-debugging run, without asking the model again.

The rule can only end a run earlier: every request before the attempt it stops at is the one the run made
(same prompts, same seeds), so the new run's answer is the recorded code of the first attempt whose every
failing example the rule finds to be the sandbox's. This reruns each recorded failed attempt's examples in
the sandbox with today's judge and scores the attempt the new run would keep with the hidden tests.
Usage: [PYCAPSULE_PYTHON=VENV/bin/python] python3 docs/results/examples-sandbox-lacks/replay.py \
         DATASET RECORDS.jsonl.gz [--data PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pycapsule.bench.attempts import candidate_module
from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.records import read_records
from pycapsule.bench.workspace import PromptWorkspace
from pycapsule.config import DEFAULTS
from pycapsule.executor import execute
from pycapsule.sandbox.select import open_sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("records", type=Path)
    parser.add_argument("--data", type=Path, help="the dataset file (default: where the bench finds it)")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    tasks = load_tasks(args.dataset, args.data)[1][: args.limit]
    records = read_records(args.records)
    sandbox = open_sandbox(None, python=os.environ.get("PYCAPSULE_PYTHON"))
    before = after = calls_before = calls_after = replayed = 0
    changed: list[str] = []
    try:
        for task in tasks:
            record = records.get(task.task_id)
            if record is None or record.status == "unscorable":
                continue
            replayed += 1
            place = PromptWorkspace(task)
            capsule = place.capsule()
            stop = None
            attempts = zip(record.codes, record.verdicts, strict=True)
            for attempt, (code, verdict) in enumerate(attempts, start=1):
                module = candidate_module(capsule, code) if verdict == "failed" else None
                if module is None:
                    continue
                judged = execute(sandbox, capsule, module, DEFAULTS.job_timeout)
                if judged.label == "not_verified":
                    stop = (attempt, module, judged.headline)
                    break
            passed = record.status == "passed"
            before += passed
            calls_before += record.model_calls
            if stop is None:
                after += passed
                calls_after += record.model_calls
                continue
            attempt, module, headline = stop
            score = place.score(sandbox, module)
            after += score.passed
            calls_after += attempt
            changed.append(f"| {task.task_id} | {record.status} ({record.model_calls} calls) | "
                           f"{score.status} (stops at {attempt}) | {headline.replace('|', '/')[:160]} |")
            print(changed[-1], file=sys.stderr)
    finally:
        sandbox.close()
    print(f"{replayed} tasks replayed from {args.records.name}: passed {before} -> {after}, model calls "
          f"{calls_before} -> {calls_after} ({calls_before / max(replayed, 1):.2f} -> "
          f"{calls_after / max(replayed, 1):.2f} per task); {len(changed)} runs end earlier.\n")
    if changed:
        print("| task | recorded | with the rule | why it stops |\n|---|---|---|---|")
        print("\n".join(changed))


if __name__ == "__main__":
    main()
