"""Write the HumanEval tasks whose prompts carry a module context: the only ones context-first changes.

Usage: python3 docs/results/realcode/context-first/humaneval_subset.py OUT
Writes OUT/HumanEval.jsonl.gz, OUT/HumanEvalET.jsonl.gz and OUT/HumanEvalPlus.jsonl.gz (the rows of those
tasks, as the datasets hold them), for `pycapsule bench humaneval|humaneval-et|humaneval-plus --data OUT`.
Every other task's prompt is the same under both prompts, so its answers are too (same model, same threads).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "server"))

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.datasets.files import FILE_NAMES, locate, records
from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context


def with_context() -> set[str]:
    _, tasks = load_tasks("humaneval")
    return {task.task_id for task in tasks
            if module_context(capsule_by_qualname(task.prompt, task.entry_point)).strip()}


def main(out: Path) -> None:
    chosen = with_context()
    out.mkdir(parents=True, exist_ok=True)
    for dataset in ("humaneval", "humaneval-et", "humaneval-plus"):
        rows = [row for row in records(locate(dataset)) if row["task_id"] in chosen]
        with gzip.open(out / FILE_NAMES[dataset], "wt", encoding="utf-8") as file:
            file.writelines(json.dumps(row) + "\n" for row in rows)
        print(f"{dataset}: {len(rows)} tasks -> {out / FILE_NAMES[dataset]}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
