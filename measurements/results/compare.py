"""Compare two bench runs task by task: pass@1 of each, the tasks only one of them passed, and an exact
two-sided sign test on those discordant tasks (how likely a split at least this uneven is by chance).

Usage: python3 measurements/results/compare.py A B [--first-attempt]
A and B are runs' records (`.jsonl`, or published `.jsonl.gz` under data/records/) or their
manifests (`.json`, whose records are read wherever they are). Only tasks present in both are compared.
--first-attempt compares whether attempt 1 passed the prompt's examples instead of the final hidden-test
status. Each run's cost comes with it: completion tokens per model call (median, p90, max) and the median
seconds to a body that passes its examples (the attempts up to it), over the tasks both hold; and what each
run's "passed" promised: of the bodies it called passed, how many pass the hidden tests (the precision of
"passed"; passed_loosely counted apart). It reads records with this checkout's pycapsule (server/).
"""

import argparse
import statistics
import sys
from math import comb
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from pycapsule.bench.records import TaskRecord, read_manifest, read_records, results_of
from pycapsule.bench.summary import summarize


def load(path: Path) -> dict[str, TaskRecord]:
    if path.suffix == ".json":
        path = results_of(path, read_manifest(path))
    return read_records(path)


def passed(record: TaskRecord, first_attempt: bool) -> bool:
    if first_attempt:
        return record.passed_attempt == 1
    return record.passed


def sign_test(wins: int, losses: int) -> float:
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def cost(records: list[TaskRecord]) -> str:
    """Completion tokens per call and the median time to a body passing its examples."""
    tokens = sorted(completion for record in records for _, completion in record.attempt_tokens)
    if not tokens:
        return "no calls recorded"
    p90 = tokens[min(len(tokens) - 1, round(0.9 * (len(tokens) - 1)))]
    to_pass = [sum(r.attempt_seconds[: r.passed_attempt]) for r in records if r.passed_attempt]
    waited = f"{statistics.median(to_pass):.1f} s" if to_pass else "-"
    return (f"{len(tokens)} calls, completion tokens per call median {statistics.median(tokens):.0f}, "
            f"p90 {p90}, max {tokens[-1]}; median to a body passing its examples {waited} "
            f"({len(to_pass)} bodies)")


def promise(records: dict[str, TaskRecord]) -> str:
    """The precision of "passed" as the run's report counts it (`summarize`: over the scored tasks)."""
    run = summarize({}, records)
    precision = f"{run.precision:.1f} %" if run.precision is not None else "-"
    return (f"called passed {run.called_passed}, {run.called_passed_right} of them pass the hidden tests: "
            f"precision of \"passed\" {precision}; passed_loosely {run.called_loosely} "
            f"({run.called_loosely_right} pass the hidden tests)")


def task_order(task: str) -> tuple[str, int, str]:
    """HumanEval/2 before HumanEval/10; other ids (realcode's file::function) by name."""
    prefix, _, last = task.rpartition("/")
    return (prefix, int(last), "") if last.isdigit() else (task, 0, "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--first-attempt", action="store_true")
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    tasks = sorted(set(a) & set(b), key=task_order)
    only_a = [t for t in tasks if passed(a[t], args.first_attempt) and not passed(b[t], args.first_attempt)]
    only_b = [t for t in tasks if passed(b[t], args.first_attempt) and not passed(a[t], args.first_attempt)]
    for name, runs in (("A", a), ("B", b)):
        count = sum(passed(runs[t], args.first_attempt) for t in tasks)
        calls = sum(runs[t].model_calls for t in tasks) / max(1, len(tasks))
        print(f"{name}: {count}/{len(tasks)} passed ({100 * count / max(1, len(tasks)):.1f}%), "
              f"{calls:.2f} model calls/task; {cost([runs[t] for t in tasks])}")
    print(f"only A: {len(only_a)} {' '.join(t.split('/')[-1] for t in only_a)}")
    print(f"only B: {len(only_b)} {' '.join(t.split('/')[-1] for t in only_b)}")
    print(f"sign test (two-sided): p = {sign_test(len(only_a), len(only_b)):.3f}")
    for name, runs in (("A", a), ("B", b)):
        print(f"{name}: {promise({t: runs[t] for t in tasks})}")


if __name__ == "__main__":
    main()
