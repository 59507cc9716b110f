"""Score an earlier realcode run's final bodies on realcode-visible's hidden half (no model call).

    python3 docs/results/realcode-visible/rescore.py RECORDS.jsonl[.gz] OUT.jsonl

RECORDS: a realcode run's records (e.g. the published examples-only run). For each task of realcode-visible
it runs the hidden half of the function's tests on that run's final module, in the sandbox, and writes one
line per task: the task, what the run called its outcome (its examples, and no project tests, decided it)
and the hidden half's verdict. The realcode-visible report compares these with a run that saw the visible
half of the tests.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.records import read_records
from pycapsule.bench.workspace import TreeWorkspace
from pycapsule.sandbox.select import open_sandbox


def main(records_path: str, out_path: str) -> None:
    records = read_records(Path(records_path))
    _, tasks = load_tasks("realcode-visible")
    sandbox = open_sandbox(None)
    try:
        with open(out_path, "w", encoding="utf-8") as out:
            for task in tasks:
                record = records[task.task_id]
                assert task.project is not None
                with tempfile.TemporaryDirectory(prefix="pycapsule-rescore-") as scratch:
                    place = TreeWorkspace(task, task.project, Path(scratch))
                    score = place.score(sandbox, record.final_code)
                line = {"task_id": task.task_id, "outcome": record.outcome, "hidden": score.status,
                        "detail": score.detail[:300]}
                out.write(json.dumps(line) + "\n")
                print(task.task_id, record.outcome, score.status, flush=True)
    finally:
        sandbox.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
