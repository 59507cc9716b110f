"""Would a test designer help? Examples the model writes for a function, checked before any loop is built.

Issue 16's item 3 names a lever: when a docstring has too few examples, a separate request asks the model for
more, and the loop checks candidate bodies against them too. Whether it can win is decided by two rates
this script measures on a finished self-debugging run, asking the model only for the examples:
- how often the designed examples are wrong (they fail the task's canonical solution): a wrong example would
  make the loop reject a right body;
- on the run's final bodies: how many that fail the hidden tests the designed examples catch (what the lever
  could fix), and how many that pass them the designed examples reject (what it could break).
The model is asked greedily, once per task, with the task's module (the prompt the loop sees) and
DESIGNER_REQUEST. Prints a table and writes one JSON line per task to --out.
Usage, from the checkout: PYTHONPATH=. PYCAPSULE_MODEL_THREADS=2 python3 docs/results/test-designer/probe.py \
         RECORDS.jsonl.gz --size 1.5b \
         [--passing N] [--out probe.jsonl]
"""

from __future__ import annotations

import argparse
import doctest
import json
import re
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

from openai import OpenAI
from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.records import TaskRecord, read_records
from pycapsule.bench.tasks import BenchTask
from pycapsule.embedded_model.catalog import spec_for
from pycapsule.embedded_model.install import install
from pycapsule.embedded_model.serve import ServerOptions, default_threads
from pycapsule.sandbox.api import DoctestItem, Job, Sandbox
from pycapsule.sandbox.select import open_sandbox

from measurements.model import served_in_process

DESIGNER_REQUEST = (
    "Here is a Python module with a function `{name}` whose body is missing:\n```python\n{prompt}\n```\n"
    "Write 5 more doctest examples for `{name}` that check what its docstring says, edge cases included. "
    "Each example is one `>>> ` line calling `{name}`, then its exact expected output on the next line. "
    "Reply with the examples only, inside one ```python block."
)
MAX_TOKENS = 400
_BLOCK = re.compile(r"```(?:python|py)?\n(.*?)```", re.DOTALL)


@dataclass
class Probe:
    task_id: str
    hidden_pass: bool
    """The run's final body passes the hidden tests."""
    designed: list[str]
    """The examples the model wrote, as doctest text (source and expected output)."""
    wrong: int
    """Of them, those the canonical solution fails: the examples are wrong."""
    final_fails: int
    """Of them, those the run's final body fails."""
    final_fails_right: int
    """Of those, the ones the canonical solution passes: failures that point at a real mistake."""


def designed_examples(answer: str, name: str, given: str) -> list[doctest.Example]:
    block = _BLOCK.search(answer)
    seen = {example.source for example in _examples(given)}
    examples = _examples(block.group(1) if block else answer)
    return [e for e in examples if f"{name}(" in e.source and e.want and e.source not in seen]


def _examples(text: str) -> list[doctest.Example]:
    """The doctest examples in `text`, each docstring-like chunk on its own (one malformed chunk costs only
    itself)."""
    found: list[doctest.Example] = []
    for chunk in re.split(r'"""|\'\'\'', text):
        try:
            found += doctest.DocTestParser().get_examples(textwrap.dedent(chunk))
        except ValueError:
            continue
    return found


def failing(sandbox: Sandbox, module: str, examples: list[doctest.Example]) -> set[int]:
    """Which examples (by index) fail against `module`: a wrong output, an exception, a timeout."""
    found: set[int] = set()
    for index, example in enumerate(examples):  # one job each: an example never depends on another here
        text = f">>> {example.source.rstrip()}\n{example.want}"
        result = sandbox.run(Job(source=module, doctests=(DoctestItem("__designed__", text, 1),), timeout=10))
        if not result.passed:
            found.add(index)
    return found


def probe(task: BenchTask, record: TaskRecord, client: OpenAI, model: str, sandbox: Sandbox) -> Probe:
    request = DESIGNER_REQUEST.format(name=task.entry_point, prompt=task.prompt.strip())
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": request}],
                                           max_tokens=MAX_TOKENS, temperature=0.0)
    examples = designed_examples(reply.choices[0].message.content or "", task.entry_point, task.prompt)
    wrong = failing(sandbox, task.reference, examples)
    final = failing(sandbox, record.final_code or task.prompt, examples)
    return Probe(task.task_id, record.status == "passed",
                 [f">>> {e.source.rstrip()}\n{e.want.rstrip()}" for e in examples],
                 len(wrong), len(final), len(final - wrong))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="a HumanEval self-debugging run's records")
    parser.add_argument("--size", default="1.5b")
    parser.add_argument("--passing", type=int, default=30,
                        help="how many of the tasks whose final body passes the hidden tests (the first N)")
    parser.add_argument("--out", type=Path, default=Path("probe.jsonl"))
    args = parser.parse_args()
    tasks = {task.task_id: task for task in load_tasks("humaneval")[1]}
    records = list(read_records(args.records).values())
    failed = [r for r in records if r.status != "passed"]
    chosen = failed + [r for r in records if r.status == "passed"][: args.passing]
    done = {probe.task_id for probe in read_probes(args.out)}
    spec = spec_for(args.size)
    options = ServerOptions(install(spec), spec.alias, threads=default_threads())
    sandbox = open_sandbox("bwrap")
    try:
        with served_in_process(options, timeout=900) as client, args.out.open("a") as out:
            for number, record in enumerate(chosen, start=1):
                if record.task_id in done:
                    continue
                result = probe(tasks[record.task_id], record, client, spec.alias, sandbox)
                out.write(json.dumps(asdict(result)) + "\n")
                print(f"[{number}/{len(chosen)}] {result.task_id}: {len(result.designed)} designed, "
                      f"{result.wrong} wrong, final body fails {result.final_fails} "
                      f"({result.final_fails_right} right ones)", flush=True)
    finally:
        sandbox.close()
    print(summary(read_probes(args.out)))


def read_probes(path: Path) -> list[Probe]:
    return [Probe(**json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


def summary(probes: list[Probe]) -> str:
    designed = sum(len(p.designed) for p in probes)
    wrong = sum(p.wrong for p in probes)
    bad, good = [p for p in probes if not p.hidden_pass], [p for p in probes if p.hidden_pass]
    return "\n".join([
        "| | tasks | with designed examples | designed examples | wrong (fail the canonical solution) |",
        "|---|---|---|---|---|",
        f"| all probed | {len(probes)} | {sum(1 for p in probes if p.designed)} | {designed} | {wrong} |",
        "",
        "| final body | tasks | a designed example fails it | a right designed example fails it |",
        "|---|---|---|---|",
        f"| fails the hidden tests (could be fixed) | {len(bad)} | {sum(1 for p in bad if p.final_fails)} | "
        f"{sum(1 for p in bad if p.final_fails_right)} |",
        f"| passes them (could be broken) | {len(good)} | {sum(1 for p in good if p.final_fails)} | "
        f"{sum(1 for p in good if p.final_fails_right)} |",
    ])


if __name__ == "__main__":
    main()
