"""Write the HumanEval tasks whose prompts carry a module context: the only ones context-first changes.

Usage: python3 docs/results/realcode/context-first/humaneval_subset.py [--definitions] OUT
With --definitions, only the tasks whose context shows a function or a class: the only ones the narrower
variant (context first only when it shows definitions) changes.
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
from pycapsule.prompts import context_goes_first


def with_context(definitions_only: bool) -> set[str]:
    _, tasks = load_tasks("humaneval")
    contexts = {task.task_id: module_context(capsule_by_qualname(task.prompt, task.entry_point))
                for task in tasks}
    return {task_id for task_id, context in contexts.items()
            if context.strip() and (not definitions_only or context_goes_first(context))}


def main(out: Path, definitions_only: bool) -> None:
    chosen = with_context(definitions_only)
    out.mkdir(parents=True, exist_ok=True)
    for dataset in ("humaneval", "humaneval-et", "humaneval-plus"):
        rows = [row for row in records(locate(dataset)) if row["task_id"] in chosen]
        with gzip.open(out / FILE_NAMES[dataset], "wt", encoding="utf-8") as file:
            file.writelines(json.dumps(row) + "\n" for row in rows)
        print(f"{dataset}: {len(rows)} tasks -> {out / FILE_NAMES[dataset]}")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    definitions = "--definitions" in arguments
    paths = [argument for argument in arguments if argument != "--definitions"]
    if len(paths) != 1:
        sys.exit(__doc__)
    main(Path(paths[0]), definitions)
