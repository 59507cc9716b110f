"""Compare the first answers of two realcode runs, task by task (the table in README.md).

Usage: python3 docs/results/realcode/context-first/first_answers.py A B
A, B: two runs' per-task records (.jsonl or .jsonl.gz). Prints, for each run over the tasks both hold: first
answers that pass the library's tests, that pass the docstring's examples ("fails with an iterator" counts
as passing them: the examples as written passed), that do not fit the target's signature, that define more
than one function or class, and the completion tokens per answer (mean / median).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
from pathlib import Path

DEFINITION = re.compile(r"^(?:async )?def \w+|^class \w+", re.MULTILINE)


def load(path: Path) -> dict[str, dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return {record["task_id"]: record for record in map(json.loads, lines)}


def figures(records: list[dict]) -> dict[str, int | str]:
    headlines = [record["headlines"][0] if record["headlines"] else "" for record in records]
    tokens = [record["attempt_tokens"][0][1] for record in records]
    return {
        "passes the library's tests": sum(record["status"] == "passed" for record in records),
        "passes the examples": sum(h == "passed" or h.startswith("fails with an iterator")
                                   for h in headlines),
        "does not fit the signature": sum("does not fit" in h for h in headlines),
        "defines more than one function": sum(len(DEFINITION.findall(record["codes"][0] or "")) > 1
                                              for record in records),
        "completion tokens mean / median": f"{statistics.mean(tokens):.0f} / {statistics.median(tokens):.0f}",
    }


def main() -> None:
    a, b = (load(Path(arg)) for arg in sys.argv[1:3])
    tasks = [task for task in a if task in b]
    rows = zip(figures([a[t] for t in tasks]).items(), figures([b[t] for t in tasks]).values(), strict=True)
    print(f"{len(tasks)} tasks in both runs: A | B")
    for (name, in_a), in_b in rows:
        print(f"{name}: {in_a} | {in_b}")


if __name__ == "__main__":
    main()
