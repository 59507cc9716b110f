"""How tightly the examples (and project tests) pin down the bodies pycapsule called passed, measured offline.

Issue 65 item 7: every body a published run called "passed" (its prompt's examples, and for realcode-visible
the visible project tests, pass) is mutated (`pycapsule.strength.mutants`) and its mutants are run against the
same examples and tests (`pycapsule.strength.check.measure_strength`, default `Budget`, as the loop calls it:
`lines_run` = the lines the examples and tests ran, `body_seconds` = the examples' own time). The share of
mutants caught is set beside the run's hidden-test verdict, to choose `min_caught` by measurement: the
threshold that maximizes F1 of (precision of "passed", recall of hidden-passing bodies) on one half of the
tasks, reported on the other half.

Usage: python3 measurements/results/strength.py [--out docs/results/strength] [--datasets humaneval-plus,mbpp,
realcode-visible] [--models 1.5b,0.5b] [--limit N] [--report-only]

Resumable: a body already in --rows (data/records/strength/rows.jsonl.gz), measured with the same
strength module (`strength_sha`, a hash of server/pycapsule/strength/*.py), is not measured again; rows of
another version are dropped.
OUT/README.md's tables (between its markers; the text around them is kept) are rewritten from all rows.
--min-timeout sets `Budget.min_timeout` for a side experiment (use another --out). No model is called; jobs
run one at a time in the sandbox (`open_sandbox(None)`). It reads the records with this checkout's pycapsule
(server/)."""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "server"))

from pycapsule.bench.records import TaskRecord, read_manifest, read_records, results_of  # noqa: E402
from pycapsule.strength.check import Budget  # noqa: E402


def module_hash() -> str:
    """The strength module's files as they are now (others may be editing it while this runs)."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "server" / "pycapsule" / "strength").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


STRENGTH_SHA = module_hash()
"""Of the strength module this process imported (read right after importing it): every row names it, and
only rows of the same version are resumed or reported together."""

RESULTS = REPO / "docs" / "results"
MODELS = {"1.5b": "qwen2.5-coder-1.5b", "0.5b": "qwen2.5-coder-0.5b"}
THRESHOLDS = (0.0, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
JOB_TIMEOUT = 10.0
"""The runs' `job_timeout` (every manifest here has 10 s, the default)."""
SHORT_BODY = 40
"""The timing target's bodies: up to this many lines."""
START, END = "<!-- strength.py: tables start -->", "<!-- strength.py: tables end -->"


@dataclass(frozen=True)
class Run:
    """One published self-debugging run whose "passed" bodies are measured, and the runs that re-score the
    same bodies on other hidden tests."""

    dataset: str
    model: str
    folder: str
    """Under docs/results/: the folder of the run's manifests."""
    paired: tuple[tuple[str, str], ...] = ()
    """(row field, dataset) of runs in the same folder whose records score the same bodies."""

    @property
    def name(self) -> str:
        return f"{self.folder}/{self.dataset}-selfdebug"


RUNS = (
    *(Run("humaneval-plus", size, f"prompt-cache/{MODELS[size]}",
          (("hidden_et", "humaneval-et"), ("hidden_base", "humaneval"))) for size in ("1.5b", "0.5b")),
    *(Run("mbpp", size, f"mbpp/{MODELS[size]}", (("hidden_et", "mbpp-et"),)) for size in ("1.5b", "0.5b")),
    Run("realcode-visible", "1.5b", f"realcode-visible/with-visible-tests/{MODELS['1.5b']}"),
)


def manifest_of(folder: str, dataset: str) -> Path:
    found = sorted((RESULTS / folder).glob(f"{dataset}-selfdebug-*.json"))
    if len(found) != 1:
        raise SystemExit(f"expected one {dataset} self-debugging manifest in docs/results/{folder}, found "
                         f"{len(found)}")
    return found[0]


def records_of(folder: str, dataset: str) -> dict[str, TaskRecord]:
    manifest = manifest_of(folder, dataset)
    return read_records(results_of(manifest, read_manifest(manifest)))


# ---- rows on disk ---------------------------------------------------------------------------------------


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as file:
        try:
            for line in file:
                if line.strip():
                    rows.append(json.loads(line))
        except (EOFError, gzip.BadGzipFile, json.JSONDecodeError):
            pass  # a member cut short by an interrupted run: what came before it is kept
    return rows


def append_row(path: Path, row: dict[str, Any]) -> None:
    with gzip.open(path, "at", encoding="utf-8") as file:
        file.write(json.dumps(row, sort_keys=True) + "\n")


def rewrite_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """One gzip member, rows in a stable order (the appended form has one member per row)."""
    temporary = path.with_suffix(".tmp")
    with gzip.GzipFile(temporary, "wb", mtime=0) as raw:
        for row in sorted(rows, key=lambda r: (r["run"], task_order(r["task_id"]))):
            raw.write((json.dumps(row, sort_keys=True) + "\n").encode())
    os.replace(temporary, path)


def task_order(task: str) -> tuple[str, int, str]:
    prefix, _, last = task.rpartition("/")
    return (prefix, int(last), "") if last.isdigit() else (task, 0, "")


# ---- measuring ------------------------------------------------------------------------------------------


def body_size(source: str, qualname: str) -> int:
    """Lines of the function's body without its docstring (first statement to the function's last line)."""
    node: Any = ast.parse(source)
    for name in qualname.split("."):
        node = next(c for c in node.body if getattr(c, "name", None) == name)
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1


def measure(sandbox: Any, capsule: Any, source: str, tests: Any | None, budget: Budget) -> dict[str, Any]:
    """The body's examples (and `tests`) run once as the loop runs them, then its strength."""
    from pycapsule.executor import execute
    from pycapsule.strength.check import measure_strength
    from pycapsule.strength.mutants import mutants_of
    from pycapsule.tests_job import body_lines

    row: dict[str, Any] = {"body_lines": body_size(source, capsule.qualname)}
    examples = capsule.verified_by_doctests
    lines: frozenset[int] = frozenset()
    seconds = 0.0
    passes = True
    if examples:
        verdict = execute(sandbox, capsule, source, JOB_TIMEOUT, None, trace_lines=True)
        passes = verdict.passed
        lines, seconds = frozenset(verdict.result.lines_run), verdict.result.duration
        row.update(examples_seconds=round(seconds, 4), examples_lines=len(lines))
        if not passes:
            row["why_not"] = verdict.headline
    ran_tests = None
    if tests is not None and passes:
        run, _ = tests.run(sandbox, source)
        row.update(tests_selected=len(tests.selection.node_ids), tests_passed=run.passed,
                   tests_failed=run.failed)
        if run.ok:
            ran_tests = tests
            lines |= run.lines_run
        else:  # the loop calls a body whose project tests fail failed
            passes = False
            row["why_not"] = run.problem or f"{run.failed} project test(s) fail"
    if passes and not examples and ran_tests is None:
        passes = False
        row["why_not"] = "nothing checks it (no runnable example, no project test)"
    row["passes_examples_here"] = passes
    if not passes:
        return row
    strength, survivors = measure_strength(sandbox, capsule, source, examples=examples, tests=ran_tests,
                                           lines_run=lines, body_seconds=seconds, job_timeout=JOB_TIMEOUT,
                                           root=None, budget=budget)
    listed = mutants_of(source, capsule.qualname, limit=budget.mutants).mutants
    families = Counter(m.operator for m in listed)
    statements = body_lines(source, capsule.qualname)
    unrun = [bool(lines) and m.line in statements and m.line not in lines for m in survivors]
    row.update(run_mutants=strength.run, caught=strength.caught, total=strength.total,
               capped=strength.capped, share=round(strength.share, 4), seconds=round(strength.seconds, 3),
               examples=examples, tests=ran_tests is not None, lines_run=len(lines),
               families=dict(sorted(families.items())),
               unrun_survivors=sum(unrun),
               survivors=[[m.line, m.operator, m.change, u] for m, u in zip(survivors, unrun, strict=True)])
    return row


def prompt_bodies(run: Run, limit: int | None) -> Iterator[tuple[TaskRecord, Callable[[], Any], Any]]:
    """(record, capsule maker, tests) of each body the run called passed, for a prompt-only dataset."""
    from pycapsule.bench.datasets import load_tasks
    from pycapsule.bench.workspace import PromptWorkspace

    _, tasks = load_tasks(run.dataset)
    by_id = {task.task_id: task for task in tasks}
    passed = [r for r in records_of(run.folder, run.dataset).values() if r.outcome == "passed"]
    for record in sorted(passed, key=lambda r: task_order(r.task_id))[:limit]:
        yield record, PromptWorkspace(by_id[record.task_id]).capsule, None


def tree_bodies(run: Run, limit: int | None, sandbox: Any
                ) -> Iterator[tuple[TaskRecord, Callable[[], Any], Any]]:
    """The same for realcode-visible: each task in a copy of its library's tree, with the project's tests
    pycapsule finds there (the visible half and the library's other tests of the function), minus those
    already failing on the stub, as `Engine.generate` builds them."""
    from pycapsule.bench.datasets import load_tasks
    from pycapsule.bench.workspace import workspace
    from pycapsule.config import Settings
    from pycapsule.engine import project_tests
    from pycapsule.interpreter import Interpreter

    settings = Settings()
    interpreter = Interpreter(settings.python, "the bench's `python` setting")
    _, tasks = load_tasks(run.dataset)
    by_id = {task.task_id: task for task in tasks}
    passed = [r for r in records_of(run.folder, run.dataset).values() if r.outcome == "passed"]
    for record in sorted(passed, key=lambda r: task_order(r.task_id))[:limit]:
        with workspace(by_id[record.task_id]) as place:
            capsule = place.capsule()
            tests, _notices = project_tests(capsule, sandbox, settings, interpreter)
            yield record, lambda capsule=capsule: capsule, tests


def measure_run(run: Run, rows_path: Path, done: set[tuple[str, str]], limit: int | None, sandbox: Any,
                budget: Budget) -> int:
    paired = {field: records_of(run.folder, dataset) for field, dataset in run.paired}
    in_tree = run.dataset == "realcode-visible"
    bodies = tree_bodies(run, limit, sandbox) if in_tree else prompt_bodies(run, limit)
    measured = 0
    for record, make_capsule, tests in bodies:
        if (run.name, record.task_id) in done:
            continue
        code = record.final_code or ""
        row: dict[str, Any] = {"run": run.name, "dataset": run.dataset, "model": run.model,
                               "task_id": record.task_id, "hidden": record.status == "passed",
                               "status": record.status, "attempt": record.passed_attempt,
                               "code_sha256": hashlib.sha256(code.encode()).hexdigest()[:16],
                               "sandbox": sandbox.name, "load1": round(os.getloadavg()[0], 2),
                               "budget": asdict(budget), "strength_sha": STRENGTH_SHA}
        for field, others in paired.items():
            other = others.get(record.task_id)
            # another dataset's prompt can differ (MBPP-ET keeps MBPP's original wording): only the same body
            row[field] = other.status == "passed" if other is not None and other.final_code == code else None
        began = time.monotonic()
        try:
            row.update(measure(sandbox, make_capsule(), code, tests, budget))
        except Exception as error:  # one body's crash is recorded, not the end of the measurement
            row.update(passes_examples_here=None, error=f"{type(error).__name__}: {error}",
                       traceback=traceback.format_exc()[-2000:])
        row["wall_seconds"] = round(time.monotonic() - began, 3)
        append_row(rows_path, row)
        measured += 1
        share = f"{row['caught']}/{row['run_mutants']} of {row['total']}" if "share" in row else \
            row.get("error") or f"skipped: {row.get('why_not', '')[:80]}"
        print(f"{run.name} {record.task_id}: hidden {record.status}, {share}, {row['wall_seconds']:.1f} s",
              file=sys.stderr, flush=True)
    return measured


# ---- the choice and the tables --------------------------------------------------------------------------


def half(task_id: str) -> str:
    """The split: A when the SHA-256 of the task id (UTF-8), read as a number, is even; else B."""
    return "A" if int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 2 == 0 else "B"


@dataclass(frozen=True)
class Point:
    t: float
    bodies: int
    passed: int
    """Bodies still "passed" at t."""
    true_passed: int
    """... of them passing the hidden tests."""
    hidden: int
    """Bodies passing the hidden tests."""

    @property
    def moved(self) -> int:
        return self.bodies - self.passed

    @property
    def precision(self) -> float | None:
        return self.true_passed / self.passed if self.passed else None

    @property
    def recall(self) -> float | None:
        return self.true_passed / self.hidden if self.hidden else None

    @property
    def f1(self) -> float:
        return self.f(1.0)

    def f(self, beta: float) -> float:
        """F-beta of (precision, recall): beta < 1 weighs precision more."""
        p, r = self.precision, self.recall
        return (1 + beta**2) * p * r / (beta**2 * p + r) if p and r else 0.0

    @property
    def moved_failing(self) -> int:
        """Of the moved bodies, those failing the hidden tests (what the move is for)."""
        return (self.bodies - self.hidden) - (self.passed - self.true_passed)


def point(rows: list[dict[str, Any]], t: float, label: str = "hidden", key: str = "share") -> Point:
    """"passed" at t = `key` (the caught share) >= t; `label`: the hidden verdict scored against."""
    rows = [r for r in rows if r.get(label) is not None]
    passed = [r for r in rows if r[key] >= t]
    return Point(t, len(rows), len(passed), sum(r[label] for r in passed), sum(r[label] for r in rows))


def choose(rows: list[dict[str, Any]], key: str = "share", beta: float = 1.0) -> float:
    """The threshold of THRESHOLDS with the highest F-beta (F1) on `rows` (ties: the higher threshold)."""
    return max(THRESHOLDS, key=lambda t: (round(point(rows, t, key=key).f(beta), 12), t))


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def sweep_table(rows: list[dict[str, Any]], label: str = "hidden") -> list[str]:
    lines = ["| t | called passed | of them pass hidden | precision | recall | moved to passed_loosely "
             "(of them fail hidden) | F1 | F0.5 |", "|---|---|---|---|---|---|---|---|"]
    for t in THRESHOLDS:
        p = point(rows, t, label)
        lines.append(f"| {t:g} | {p.passed}/{p.bodies} | {p.true_passed} | {pct(p.precision)} | "
                     f"{pct(p.recall)} | {p.moved} ({p.moved_failing}) | {p.f1:.3f} | {p.f(0.5):.3f} |")
    return lines


def matrix_table(named: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    """Every threshold (rows) for every group (columns): precision / recall / moved."""
    named = [(name, rows) for name, rows in named if rows]
    lines = ["| t | " + " | ".join(f"{name} (n {len(rows)}, {sum(r['hidden'] for r in rows)} pass hidden)"
                                   for name, rows in named) + " |", "|---|" + "---|" * len(named)]
    for t in THRESHOLDS:
        cells = []
        for _, rows in named:
            p = point(rows, t)
            cells.append(f"{pct(p.precision)} / {pct(p.recall)} / {p.moved}")
        lines.append(f"| {t:g} | {' | '.join(cells)} |")
    return lines


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile (q in (0, 1])."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * q // 1))
    return ordered[int(rank) - 1]


def auc(rows: list[dict[str, Any]], key: str = "share") -> float | None:
    """How often a hidden-passing body has a higher share than a hidden-failing one (ties count half)."""
    good = [r[key] for r in rows if r["hidden"]]
    bad = [r[key] for r in rows if not r["hidden"]]
    if not good or not bad:
        return None
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def groups(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    keys = sorted({(r["dataset"], r["model"]) for r in rows}, key=lambda k: ([x.dataset for x in RUNS].index(
        k[0]), k[1] != "1.5b"))
    return [(f"{dataset} {model}", [r for r in rows if (r["dataset"], r["model"]) == (dataset, model)])
            for dataset, model in keys]


def compare_table(named: list[tuple[str, list[dict[str, Any]]]], chosen: float, label: str = "hidden"
                  ) -> list[str]:
    shown = sorted({0.0, 0.5, 0.65, 0.8, 0.9, 1.0, chosen})
    head = " | ".join(f"t={t:g}: precision / recall / moved" for t in shown)
    lines = [f"| bodies | n (pass hidden) | {head} |", "|---|---|" + "---|" * len(shown)]
    for name, rows in named:
        rows = [r for r in rows if r.get(label) is not None]
        if not rows:
            continue
        cells = []
        for t in shown:
            p = point(rows, t, label)
            cells.append(f"{pct(p.precision)} / {pct(p.recall)} / {p.moved}")
        lines.append(f"| {name} | {len(rows)} ({sum(r[label] for r in rows)}) | {' | '.join(cells)} |")
    return lines


def coverage_table(all_rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| run | called passed | measured | no longer pass here (skipped) | crashed | pass hidden "
             "(of measured) |", "|---|---|---|---|---|---|"]
    for run in RUNS:
        rows = [r for r in all_rows if r["run"] == run.name]
        if not rows:
            continue
        measured = [r for r in rows if r.get("passes_examples_here")]
        skipped = sum(r.get("passes_examples_here") is False for r in rows)
        crashed = sum("error" in r for r in rows)
        lines.append(f"| {run.name} ({run.model}) | {len(rows)} | {len(measured)} | {skipped} | {crashed} | "
                     f"{sum(r['hidden'] for r in measured)} |")
    return lines


def cost_table(named: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    budget = Budget()
    lines = ["| bodies | n | mutants run: median / p90 | mutants it has: median / p90 / max | capped "
             "(of them: over 60 mutants / the 20 s budget) | no mutant | seconds: median / p95 / max | "
             "share: median (pass hidden / fail hidden) | AUC |", "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in named:
        if not rows:
            continue
        run = [r["run_mutants"] for r in rows]
        total = [r["total"] for r in rows]
        seconds = [r["seconds"] for r in rows]
        capped = [r for r in rows if r["capped"]]
        by_limit = sum(r["total"] > budget.mutants for r in capped)
        by_time = sum(r["seconds"] >= budget.seconds for r in capped)
        good = [r["share"] for r in rows if r["hidden"]]
        bad = [r["share"] for r in rows if not r["hidden"]]
        medians = " / ".join(f"{statistics.median(v):.2f}" if v else "-" for v in (good, bad))
        area = auc(rows)
        lines.append(
            f"| {name} | {len(rows)} | {statistics.median(run):g} / {quantile(run, 0.9):g} | "
            f"{statistics.median(total):g} / {quantile(total, 0.9):g} / {max(total)} | {len(capped)} "
            f"({by_limit} / {by_time}) | {sum(r['run_mutants'] == 0 for r in rows)} | "
            f"{statistics.median(seconds):.2f} / {quantile(seconds, 0.95):.2f} / {max(seconds):.2f} | "
            f"{medians} | {'-' if area is None else f'{area:.2f}'} |")
    return lines


def timing_table(named: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    lines = [f"| bodies of up to {SHORT_BODY} lines | n | p50 s | p95 s | max s | p50 <= 1 s | p95 <= 3 s |",
             "|---|---|---|---|---|---|---|"]
    for name, rows in named:
        seconds = [r["seconds"] for r in rows if r["body_lines"] <= SHORT_BODY]
        if not seconds:
            continue
        p50, p95 = quantile(seconds, 0.5), quantile(seconds, 0.95)
        lines.append(f"| {name} | {len(seconds)} | {p50:.2f} | {p95:.2f} | {max(seconds):.2f} | "
                     f"{'yes' if p50 <= 1 else 'no'} | {'yes' if p95 <= 3 else 'no'} |")
    return lines


def family_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per operator family: mutants (of the capped lists), survivors on hidden-passing and -failing bodies."""
    made: Counter[str] = Counter()
    surviving: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for row in rows:
        made.update(row["families"])
        surviving[row["hidden"]].update(s[1] for s in row["survivors"])
    lines = ["| family | mutants listed | survive on bodies passing hidden | survive on bodies failing "
             "hidden |", "|---|---|---|---|"]
    for family, count in made.most_common():
        lines.append(f"| {family} | {count} | {surviving[True][family]} | {surviving[False][family]} |")
    return lines


def with_run_share(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with `run_share`: the caught share of the mutants that ran (survivors on lines nothing ran left
    out), the loop's `share` without its rule that such a survivor counts."""
    out = []
    for row in rows:
        ran = row["run_mutants"] - row.get("unrun_survivors", 0)
        out.append({**row, "run_share": row["caught"] / ran if ran else 1.0})
    return out


def best_table(named: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    lines = ["| bodies | share | best t on half A (F1) | on half B at that t: precision / recall / moved "
             "(F1) | t = 0 on half B: precision (F1) | AUC (all) |", "|---|---|---|---|---|---|"]
    for name, rows in named:
        rows = with_run_share(rows)
        half_a = [r for r in rows if half(r["task_id"]) == "A"]
        half_b = [r for r in rows if half(r["task_id"]) == "B"]
        if not half_a or not half_b:
            continue
        for key, what in (("share", "as the loop counts it"), ("run_share", "of mutants that ran")):
            t = choose(half_a, key)
            a, b, zero = point(half_a, t, key=key), point(half_b, t, key=key), point(half_b, 0.0, key=key)
            area = auc(rows, key)
            lines.append(f"| {name} | {what} | {t:g} ({a.f1:.3f}) | {pct(b.precision)} / {pct(b.recall)} / "
                         f"{b.moved} ({b.f1:.3f}) | {pct(zero.precision)} ({zero.f1:.3f}) | "
                         f"{'-' if area is None else f'{area:.2f}'} |")
    return lines


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip()


def code_text(measured: set[str]) -> str:
    """Which strength module the rows measured: HEAD's, or uncommitted files (named)."""
    head = git("rev-parse", "--short", "HEAD")
    digest = hashlib.sha256()
    for name in sorted(p.name for p in (REPO / "server" / "pycapsule" / "strength").glob("*.py")):
        text = subprocess.run(["git", "show", f"HEAD:server/pycapsule/strength/{name}"], cwd=REPO,
                              capture_output=True, check=False).stdout
        digest.update(name.encode() + b"\0" + text + b"\0")
    at_head = digest.hexdigest()[:12]
    last = git("log", "-1", "--format=%h", "--", "server/pycapsule/strength")
    versions = ", ".join(sorted(measured))
    if measured == {at_head}:
        return (f"commit {head}; the strength module measured (`strength_sha` {versions} in the rows) is the "
                f"one committed at HEAD (last changed in {last})")
    dirty = git("status", "--porcelain", "--", "server/pycapsule/strength").replace("\n", "; ")
    return (f"commit {head} with uncommitted changes to the strength module ({dirty}); measured "
            f"`strength_sha` {versions} (HEAD's files: {at_head}; the files now: {STRENGTH_SHA})")


def load_text(rows: list[dict[str, Any]]) -> str:
    loads = [r["load1"] for r in rows if "load1" in r]
    if not loads:
        return "not recorded"
    return f"median {statistics.median(loads):.1f}, max {max(loads):.1f} (1-minute load average at each body)"


def tables(all_rows: list[dict[str, Any]], command: str) -> str:
    rows = [r for r in all_rows if r.get("passes_examples_here") and "share" in r]
    half_a = [r for r in rows if half(r["task_id"]) == "A"]
    half_b = [r for r in rows if half(r["task_id"]) == "B"]
    chosen = choose(half_a) if half_a else 0.0
    named = groups(rows)
    halves = [("half A", half_a), ("half B", half_b), ("all", rows)]
    by_kind = [("examples only", [r for r in rows if not r.get("tests")]),
               ("examples + project tests", [r for r in rows if r.get("tests")])]
    budgets = sorted({json.dumps(r.get("budget"), sort_keys=True) for r in rows})
    out: list[str] = [
        START, "",
        f"Generated by `{command}` (the tables between these markers are rewritten on every run).",
        "",
        f"- Code: {code_text({r.get('strength_sha', '?') for r in all_rows})}",
        f"- Machine: {os.cpu_count()} cores, Python {platform.python_version()}, sandbox "
        f"{all_rows[0].get('sandbox', 'bwrap') if all_rows else '-'}; jobs one at a time; machine load "
        f"{load_text(rows)}.",
        f"- Budget (as measured, from the rows): {' / '.join(budgets)}; job timeout {JOB_TIMEOUT:g} s as "
        "in the runs.",
        "- Split: half A = tasks whose SHA-256 of the task id (UTF-8 bytes), read as a hexadecimal number, "
        "is even; half B = odd. A task is in the same half for every model and dataset pairing.",
        "",
        "### Bodies measured", "", *coverage_table(all_rows), "",
        f"### The choice on half A ({len(half_a)} bodies): t = {chosen:g}", "",
        "Precision: of the bodies still called passed at t, the share that pass the hidden tests. Recall: of "
        "the bodies that pass the hidden tests, the share still called passed. Moved: bodies that become "
        "passed_loosely (share < t). F1 of the two; the chosen t has the highest F1 on half A (ties: the "
        "higher t). F0.5 (precision weighed more) is shown only to say what another rule would pick: "
        f"t = {choose(half_a, beta=0.5) if half_a else 0.0:g} on half A.", "",
        *sweep_table(half_a), "",
        f"### Half B ({len(half_b)} bodies), reported", "", *sweep_table(half_b), "",
        f"### All {len(rows)} bodies", "", *sweep_table(rows), "",
        "### Per dataset and model (both halves): precision / recall / moved at every t", "",
        *matrix_table([*named, *halves]), "",
        "### Per dataset and model: today's t = 0 beside the chosen t and the shipped default 0.8", "",
        *compare_table([*named, *by_kind, *halves], chosen), "",
        "### Each group's own best t (chosen on its half A, reported on its half B)", "",
        "Also with the share counted only over the mutants that ran: a survivor on a line the examples "
        "never ran is left out instead of counted as surviving.", "",
        *best_table([*named, ("all", rows)]), "",
        "### Scored by the ET tests instead (HumanEval-ET; MBPP-ET only where its prompt, and so its body, "
        "is MBPP's)", "",
        *compare_table([(n, r) for n, r in named if any(x.get("hidden_et") is not None for x in r)], chosen,
                       "hidden_et"), "",
        "### Mutants and time per body", "",
        "Mutants run = judged (caught or surviving; a mutant on a line nothing ran counts as surviving, "
        "unrun); capped = fewer judged than the body has. Seconds = `Strength.seconds` (listing the mutants "
        "and running them). AUC: how often a body passing the hidden tests has a higher share than one "
        "failing them (0.5 = no better than chance).", "",
        *cost_table([*named, *by_kind, ("all", rows)]), "",
        "### Timing target (issue 65): bodies of up to 40 lines", "",
        "Body lines: the function's lines after its docstring. Targets: p50 <= 1 s, p95 <= 3 s on 2 cores.",
        "",
        *timing_table([*named, *by_kind, ("all", rows)]), "",
        "### Survivors by operator family", "", *family_table(rows), "",
        END,
    ]
    return "\n".join(out)


def write_readme(out: Path, rows: list[dict[str, Any]], command: str) -> Path:
    path = out / "README.md"
    generated = tables(rows, command)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if START in text and END in text:
        text = text[: text.index(START)] + generated + text[text.index(END) + len(END):]
    else:
        text = ("# Strength of \"passed\": mutants against the hidden tests\n\n"
                f"Measured with [strength.py](../../../measurements/results/strength.py); per body: "
                f"[data/records/strength/rows.jsonl.gz](../../../data/records/strength/rows.jsonl.gz)."
                f"\n\n{generated}\n")
    path.write_text(text, encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "strength", help="where README.md goes")
    parser.add_argument("--rows", type=Path, default=REPO / "data/records/strength/rows.jsonl.gz",
                        help="the per-body rows (records stay out of docs/)")
    parser.add_argument("--datasets", default="humaneval-plus,mbpp,realcode-visible",
                        help="comma-separated, of: " + ", ".join(dict.fromkeys(r.dataset for r in RUNS)))
    parser.add_argument("--models", default="1.5b,0.5b")
    parser.add_argument("--limit", type=int, default=None, help="at most N passed bodies per run")
    parser.add_argument("--report-only", action="store_true", help="rewrite the README from the rows only")
    parser.add_argument("--min-timeout", type=float, default=Budget().min_timeout,
                        help="Budget.min_timeout (a side experiment: use another --out)")
    args = parser.parse_args()
    datasets, models = set(args.datasets.split(",")), set(args.models.split(","))
    unknown = datasets - {r.dataset for r in RUNS}
    if unknown:
        parser.error(f"unknown dataset(s): {', '.join(sorted(unknown))}")
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.rows
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    rows = read_rows(rows_path)
    command = "python3 measurements/results/strength.py " + " ".join(sys.argv[1:])
    if not args.report_only:
        from pycapsule.sandbox.select import open_sandbox

        done = {(r["run"], r["task_id"]) for r in rows if r.get("strength_sha") == STRENGTH_SHA}
        sandbox = open_sandbox(None)
        budget = Budget(min_timeout=args.min_timeout)
        try:
            for run in RUNS:
                if run.dataset in datasets and run.model in models:
                    measure_run(run, rows_path, done, args.limit, sandbox, budget)
        finally:
            sandbox.close()
        rows = read_rows(rows_path)
        stale = [r for r in rows if r.get("strength_sha") != STRENGTH_SHA]
        if stale:
            print(f"dropped {len(stale)} rows measured with another version of the strength module",
                  file=sys.stderr)
        rows = [r for r in rows if r.get("strength_sha") == STRENGTH_SHA]
        rewrite_rows(rows_path, rows)
    print(f"readme: {write_readme(args.out, rows, command.strip())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
