"""What the signature probes (issue 65 item 4) say of the bodies pycapsule called passed, measured offline.

Every body a published run called "passed" (the same runs as strength.py) and every task's reference body
(the dataset's canonical solution; realcode's library body) is run on the inputs its annotations admit
(`pycapsule.strength.probes`), and every exception a probe raised from the module's own code is recorded.
Beside each body's hidden-test verdict this gives: how many bodies the shipped rule (`probes.FLAGGED`,
fixed before this measurement) moves from passed to passed_loosely, how many of them are wrong, the
precision of "passed" before and after, and how often a reference body, right by definition, is flagged.

Usage: python3 measurements/results/probes.py [--out docs/results/probes] [--datasets humaneval-plus,mbpp,
realcode-visible] [--models 1.5b,0.5b] [--limit N] [--report-only]

Resumable like strength.py: rows (data/records/probes/rows.jsonl.gz) of the same probes version
(`probes_sha`, a hash of strength/probes.py and examples.py) are not measured again. No model is called."""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import strength as base  # measurements/results/strength.py: the runs, the records, the rows on disk
from pycapsule.strength import probes

REPO = base.REPO
PROBES_SHA = hashlib.sha256(b"".join(
    (REPO / "server/pycapsule/strength" / name).read_bytes() for name in ("probes.py", "examples.py")
)).hexdigest()[:12]
TIMEOUT = 2.0
"""The probes' job timeout as `assess` gives it (`Budget.probe_timeout`)."""
START, END = "<!-- probes.py: tables start -->", "<!-- probes.py: tables end -->"


class _Every:
    def __contains__(self, name: object) -> bool:
        return True


def probe(sandbox: Any, capsule: Any, source: str) -> dict[str, Any]:
    began = time.monotonic()
    calls = probes.signature_calls(capsule)
    raised = probes.raised_on(sandbox, capsule, source, timeout=TIMEOUT, flagged=_Every()) if calls else ()
    return {"calls": len(calls), "raised": [[r.exception, r.call, r.error[:160]] for r in raised],
            "probe_seconds": round(time.monotonic() - began, 3)}


def reference_bodies(run: base.Run, limit: int | None, sandbox: Any) -> Iterator[tuple[str, Any, str]]:
    """(task id, capsule, module text) of every task's reference body."""
    from pycapsule.bench.datasets import load_tasks
    from pycapsule.bench.workspace import PromptWorkspace, workspace

    _, tasks = load_tasks(run.dataset)
    for task in sorted(tasks, key=lambda t: base.task_order(t.task_id))[:limit]:
        if task.project is None:
            yield task.task_id, PromptWorkspace(task).capsule(), task.reference
        else:
            with workspace(task) as place:
                yield task.task_id, place.capsule(), task.reference


def measure_run(run: base.Run, rows_path: Path, done: set[tuple[str, str]], limit: int | None,
                sandbox: Any) -> None:
    in_tree = run.dataset == "realcode-visible"
    paired = {field: base.records_of(run.folder, dataset) for field, dataset in run.paired}
    bodies = base.tree_bodies(run, limit, sandbox) if in_tree else base.prompt_bodies(run, limit)
    for record, make_capsule, _tests in bodies:
        if (run.name, record.task_id) in done:
            continue
        code = record.final_code or ""
        row: dict[str, Any] = {"run": run.name, "dataset": run.dataset, "model": run.model,
                               "task_id": record.task_id, "hidden": record.status == "passed",
                               "probes_sha": PROBES_SHA, "load1": round(os.getloadavg()[0], 2)}
        for field, others in paired.items():
            other = others.get(record.task_id)
            row[field] = other.status == "passed" if other is not None and other.final_code == code else None
        _measure(row, sandbox, make_capsule(), code)
        base.append_row(rows_path, row)
    reference = f"reference/{run.dataset}"
    if (reference, "*") in done or any(r == reference for r, _ in done):
        return
    for task_id, capsule, source in reference_bodies(run, limit, sandbox):
        row = {"run": reference, "dataset": run.dataset, "model": "", "task_id": task_id, "hidden": True,
               "probes_sha": PROBES_SHA, "load1": round(os.getloadavg()[0], 2)}
        _measure(row, sandbox, capsule, source)
        base.append_row(rows_path, row)
    done.add((reference, "*"))


def _measure(row: dict[str, Any], sandbox: Any, capsule: Any, source: str) -> None:
    try:
        row.update(probe(sandbox, capsule, source))
    except Exception as error:  # one body's crash is recorded, not the end of the measurement
        row.update(error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc()[-2000:])
    flagged = sorted({r[0] for r in row.get("raised", ()) if r[0] in probes.FLAGGED})
    raised = [r[0] for r in row.get("raised", ())]
    print(f"{row['run']} {row['task_id']}: {row.get('calls', '-')} calls, raised {raised}"
          f"{' FLAGGED' if flagged else ''}", file=sys.stderr, flush=True)


# ---- the tables -----------------------------------------------------------------------------------------


def flagged(row: dict[str, Any], types: frozenset[str] = probes.FLAGGED) -> bool:
    return any(r[0] in types for r in row.get("raised", ()))


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} % ({part}/{whole})" if whole else "-"


def run_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| run | passed bodies | probed | flagged (wrong / right) | precision of passed: before | "
             "after | right bodies kept |", "|---|---|---|---|---|---|---|"]
    for run in dict.fromkeys(r["run"] for r in rows if not r["run"].startswith("reference/")):
        mine = [r for r in rows if r["run"] == run and "error" not in r]
        probed = [r for r in mine if r.get("calls")]
        wrong = [r for r in mine if flagged(r) and not r["hidden"]]
        right = [r for r in mine if flagged(r) and r["hidden"]]
        kept = [r for r in mine if not flagged(r)]
        lines.append(f"| {run} | {len(mine)} | {len(probed)} | {len(wrong)} / {len(right)} | "
                     f"{pct(sum(r['hidden'] for r in mine), len(mine))} | "
                     f"{pct(sum(r['hidden'] for r in kept), len(kept))} | "
                     f"{pct(sum(r['hidden'] for r in kept), sum(r['hidden'] for r in mine))} |")
    return lines


def reference_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| reference bodies | tasks | probed | flagged | raised anything |", "|---|---|---|---|---|"]
    for run in dict.fromkeys(r["run"] for r in rows if r["run"].startswith("reference/")):
        mine = [r for r in rows if r["run"] == run and "error" not in r]
        probed = [r for r in mine if r.get("calls")]
        lines.append(f"| {run.removeprefix('reference/')} | {len(mine)} | {len(probed)} | "
                     f"{pct(sum(flagged(r) for r in probed), len(probed))} | "
                     f"{pct(sum(bool(r.get('raised')) for r in probed), len(probed))} |")
    return lines


def type_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per exception type: bodies raising it, wrong and right (called passed), and references."""
    judged = [r for r in rows if not r["run"].startswith("reference/") and r.get("calls")]
    references = [r for r in rows if r["run"].startswith("reference/") and r.get("calls")]
    types = Counter(t for r in judged + references for t in {x[0] for x in r.get("raised", ())})
    lines = ["| exception | flagged by the rule | passed bodies raising it: wrong / right | "
             "reference bodies |", "|---|---|---|---|"]
    for name, _ in types.most_common():
        def has(r: dict[str, Any], name: str = name) -> bool:
            return any(x[0] == name for x in r.get("raised", ()))
        lines.append(f"| {name} | {'yes' if name in probes.FLAGGED else 'no'} | "
                     f"{sum(has(r) and not r['hidden'] for r in judged)} / "
                     f"{sum(has(r) and r['hidden'] for r in judged)} | {sum(has(r) for r in references)} |")
    return lines


def cost_line(rows: list[dict[str, Any]]) -> str:
    seconds = sorted(r["probe_seconds"] for r in rows if r.get("calls") and "probe_seconds" in r)
    if not seconds:
        return "No body was probed."
    p95 = seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]
    calls = [r["calls"] for r in rows if r.get("calls")]
    return (f"Time per probed body (drawing the inputs and one sandbox job): median "
            f"{statistics.median(seconds):.3f} s, p95 {p95:.3f} s, over {len(seconds)} bodies; "
            f"{statistics.median(calls):.0f} calls per body (median).")


def examples(rows: list[dict[str, Any]], right: bool, most: int = 8) -> list[str]:
    picked = [r for r in rows
              if not r["run"].startswith("reference/") and flagged(r) and r["hidden"] == right]
    lines = []
    for r in picked[:most]:
        first = next(x for x in r["raised"] if x[0] in probes.FLAGGED)
        lines.append(f"- {r['run']} {r['task_id']}: `{first[1]}` raises {first[2]}")
    return lines or ["- none"]


def write_readme(out: Path, rows: list[dict[str, Any]], command: str) -> Path:
    tables = "\n".join([
        START, "", f"Rows: {len(rows)} (probes version {PROBES_SHA}); command: `{command}`.", "",
        "### Bodies called passed, with and without the probes' verdict", "", *run_table(rows), "",
        "### Reference bodies (right by definition): how often the rule would flag them", "",
        *reference_table(rows), "", "### Exceptions the probes raised", "", *type_table(rows), "",
        cost_line(rows), "", "### Flagged bodies that fail the hidden tests (first 8)", "",
        *examples(rows, False), "", "### Flagged bodies that pass the hidden tests (first 8)", "",
        *examples(rows, True), "", END])
    readme = out / "README.md"
    text = (readme.read_text(encoding="utf-8") if readme.is_file()
            else f"# Signature probes\n\n{START}\n{END}\n")
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    readme.write_text(before + tables + after, encoding="utf-8")
    return readme


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=base.RESULTS / "probes", help="where README.md goes")
    parser.add_argument("--rows", type=Path, default=REPO / "data/records/probes/rows.jsonl.gz")
    parser.add_argument("--datasets", default="humaneval-plus,mbpp,realcode-visible")
    parser.add_argument("--models", default="1.5b,0.5b")
    parser.add_argument("--limit", type=int, default=None, help="at most N bodies per run")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    datasets, models = set(args.datasets.split(",")), set(args.models.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    rows = [r for r in base.read_rows(args.rows) if r.get("probes_sha") == PROBES_SHA]
    if not args.report_only:
        from pycapsule.sandbox.select import open_sandbox

        done = {(r["run"], r["task_id"]) for r in rows}
        sandbox = open_sandbox(None)
        try:
            for run in base.RUNS:
                if run.dataset in datasets and run.model in models:
                    measure_run(run, args.rows, done, args.limit, sandbox)
        finally:
            sandbox.close()
        rows = [r for r in base.read_rows(args.rows) if r.get("probes_sha") == PROBES_SHA]
        base.rewrite_rows(args.rows, rows)
    command = "python3 measurements/results/probes.py " + " ".join(sys.argv[1:])
    print(f"readme: {write_readme(args.out, rows, command.strip())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
