"""Replays recorded answers through the answer watch (debugging/answer_watch.py): which it would have ended,
why, what it would have cut from answers that passed, and the tokens it would have saved.

Reads every run's records under the folders given (default data/records) whose dataset it can load
(HumanEval, MBPP and BigCodeBench need ../shared/datasets or their packages; realcode its cached sdists).
Each attempt's answer is its raw reply where the record kept one (answers that yielded no function), else
the code the loop ran: prose around the code is not recorded, so the tokens an answer spent after its
code are not counted here (a lower bound; a live run measures them). An answer counts as *passed* when it
passed its examples; a cut *changes* one when the function taken from what the watch keeps, with what it
uses of the answer, differs from the one taken from the whole answer (`function_code`). Tokens saved are
estimated from each attempt's completion tokens by the share of characters cut.
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.records import read_records
from pycapsule.bench.tasks import BenchTask, DatasetError
from pycapsule.capsule import CapsuleError, capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.context import module_context
from pycapsule.debugging import UnusableReply
from pycapsule.debugging.answer_watch import ECHOED, AnswerTarget, AnswerWatch
from pycapsule.debugging.extraction import extract_code
from pycapsule.debugging.statements import free_names, top_level_names
from pycapsule.exit_codes import ExitCode
from pycapsule.parsing import parse_source
from pycapsule.prompts import function_head

RECORDS = Path(__file__).resolve().parents[1] / "data" / "records"
_RUN_NAME = re.compile(r"^(?P<dataset>.+)-(?:direct|selfdebug)-[0-9a-f]{10}\.jsonl(?:\.gz)?$")


@dataclass(frozen=True)
class Replayed:
    dataset: str
    task_id: str
    passed: bool
    """The answer passed its examples."""
    tested: bool
    """... and the task's hidden tests."""
    end: str | None
    changed: bool
    """The cut changed the code extracted from the answer."""
    tokens: int
    saved: float
    """Completion tokens the cut would have saved (estimated by the share of characters cut)."""
    given: float = 0.0
    """Completion tokens of the function's head the model would have read instead of writing them
    (`fast_forward_echo`; estimated by the share of characters)."""

    @property
    def written(self) -> float:
        """The tokens the answer would have been written with both."""
        return self.tokens - self.saved - self.given


def replay(text: str, target: AnswerTarget) -> tuple[str | None, str, int]:
    """The watch's verdict on `text` streamed in small pieces, the text it keeps, and how many characters of
    it the model would have been given (`fast_forward_echo`): the rest of a head the answer repeats to its
    end. An answer that leaves the head after the point where the rest is given is replayed without it
    (what the model would have written after the given rest is not known)."""
    watch, base, position, given = AnswerWatch(target), 0, 0, 0
    while position < len(text):
        piece = text[position:position + 8]
        position += len(piece)
        if watch.feed(piece) is None:
            continue
        cut = base + watch.kept
        if watch.end != ECHOED:
            return watch.end, text[:cut], given
        if not text.startswith(watch.echo_rest, cut):
            end, kept, _ = replay(text, replace(target, head=""))
            return end, kept, 0
        given += len(watch.echo_rest)
        base = position = cut + len(watch.echo_rest)
        watch = AnswerWatch(target, text[:base])
    return None, text, given


def function_code(text: str, name: str, known: frozenset[str] | None = frozenset()) -> str | None:
    """The target function the loop would take from `text`, with the top-level statements of the answer
    it reads, transitively (a helper, an import), normalised by `ast.unparse`; what else the answer holds
    (a test, an example call) is left out, and so are the imports of names the user's module binds
    (`known`), which the body has anyway. None: no function."""
    try:
        module = parse_source(extract_code(text, name))
    except (UnusableReply, SyntaxError, ValueError):
        return None
    binders: dict[str, ast.stmt] = {}
    for statement in module.body:
        imported = isinstance(statement, ast.Import | ast.ImportFrom)
        for bound in top_level_names([statement]):
            if not (imported and (known is None or bound in known)):
                binders[bound] = statement
    wanted = [statement for statement in module.body if name in top_level_names([statement])]
    kept: list[ast.stmt] = []
    while wanted:
        statement = wanted.pop()
        if any(statement is other for other in kept):
            continue
        kept.append(statement)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            read = free_names(statement)
        else:
            read = {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}
        wanted.extend(binders[read_name] for read_name in read if read_name in binders)
    return "\n".join(ast.unparse(statement) for statement in module.body if any(statement is k for k in kept))


def target_of(task: BenchTask, context_chars: int) -> AnswerTarget | None:
    try:
        capsule = capsule_by_qualname(task.prompt, task.entry_point)
    except CapsuleError:
        return None
    return AnswerTarget(capsule.name, capsule.module_source, module_context(capsule, context_chars),
                        function_head(capsule))


def replay_runs(folders: list[Path]) -> tuple[list[Replayed], list[str]]:
    """Every recorded attempt's answer replayed; and the datasets that could not be loaded."""
    files = sorted(path for folder in folders for path in folder.rglob("*.jsonl*")
                   if _RUN_NAME.match(path.name))
    tasks: dict[str, dict[str, BenchTask] | None] = {}
    targets: dict[tuple[str, str], AnswerTarget | None] = {}
    context_chars = Settings().context_chars
    missing: list[str] = []
    rows: list[Replayed] = []
    seen: set[tuple[str, str, str]] = set()
    for path in files:
        dataset = _RUN_NAME.match(path.name)["dataset"]  # type: ignore[index]
        if dataset not in tasks:
            try:
                tasks[dataset] = {task.task_id: task for task in load_tasks(dataset)[1]}
            except DatasetError as error:
                tasks[dataset] = None
                missing.append(f"{dataset}: {error}")
        known = tasks[dataset]
        if known is None:
            continue
        for record in read_records(path).values():
            task = known.get(record.task_id)
            if task is None:
                continue
            key = (dataset, task.task_id)
            if key not in targets:
                targets[key] = target_of(task, context_chars)
            target = targets[key]
            if target is None:
                continue
            for index, code in enumerate(record.codes or []):
                text = record.replies.get(str(index + 1)) or code or ""
                if (dataset, task.task_id, text) in seen or not text.strip():
                    continue  # one answer in many runs (a direct run's reuse, a rerun) counts once
                seen.add((dataset, task.task_id, text))
                verdict = record.verdicts[index] if index < len(record.verdicts) else ""
                tokens = record.attempt_tokens[index][1] if index < len(record.attempt_tokens) else 0
                end, kept, given = replay(text, target)
                names = target.module_names
                changed = end is not None and (function_code(kept, target.name, names)
                                               != function_code(text, target.name, names))
                saved = tokens * (1 - len(kept) / len(text)) if end is not None else 0.0
                tested = verdict == "passed" and record.status == "passed"
                rows.append(Replayed(dataset, task.task_id, verdict == "passed", tested, end, changed,
                                     int(tokens), saved, tokens * given / len(text)))
    return rows, missing


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folders", nargs="*", type=Path, default=[RECORDS], metavar="FOLDER",
                        help="folders of bench records (default: data/records)")


def run(args: argparse.Namespace) -> int:
    rows, missing = replay_runs(args.folders)
    for reason in missing:
        print(f"skipped {reason}", file=sys.stderr)
    if not rows:
        print("no recorded answers could be replayed", file=sys.stderr)
        return ExitCode.USAGE
    ends = Counter(row.end for row in rows if row.end is not None)
    passed = [row for row in rows if row.passed]
    tested = [row for row in passed if row.tested]
    tokens = sum(row.tokens for row in rows)
    saved = sum(row.saved for row in rows)
    print("| answers | ended | by reason | passed their examples: changed by the cut "
          "| passed the task's tests: changed | tokens written | saved (est.) |")
    print("|---|---|---|---|---|---|---|")
    by_reason = ", ".join(f"{reason} {count}" for reason, count in sorted(ends.items()))
    changed_passed = sum(row.changed for row in passed)
    changed_tested = sum(row.changed for row in tested)
    print(f"| {len(rows)} | {sum(ends.values())} | {by_reason or '-'} | {changed_passed} of {len(passed)} "
          f"| {changed_tested} of {len(tested)} | {tokens} | {saved:.0f} ({saved / max(tokens, 1):.1%}) |")
    for row in passed:
        if row.changed:
            tests = "passed" if row.tested else "failed"
            print(f"changed by the cut ({row.end}): {row.dataset} {row.task_id} (the task's tests: {tests})")
    cut = sorted(row.saved for row in rows if row.end is not None)
    if cut:
        print(f"per ended answer: median {statistics.median(cut):.0f} tokens saved, max {cut[-1]:.0f}")
    print()
    print(echo_table(rows))
    return ExitCode.OK


def echo_table(rows: list[Replayed]) -> str:
    """Per dataset: the answers given their function's head (`fast_forward_echo`), the tokens that saves,
    and the tokens written per answer (median, p90) as recorded and with the cut and the head given."""
    lines = ["| dataset | answers | given the head | tokens given (est.) | written per answer: median, p90 "
             "| with the cut and the head given |", "|---|---|---|---|---|---|"]
    for dataset in sorted({row.dataset for row in rows}):
        mine = [row for row in rows if row.dataset == dataset]
        given = sum(row.given for row in mine)
        share = given / max(1, sum(row.tokens for row in mine))
        answered = sum(row.given > 0 for row in mine)
        lines.append(f"| {dataset} | {len(mine)} | {answered} | {given:.0f} ({share:.1%}) "
                     f"| {_median_p90([row.tokens for row in mine])} "
                     f"| {_median_p90([row.written for row in mine])} |")
    return "\n".join(lines)


def _median_p90(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{statistics.median(ordered):.0f}, {ordered[int(0.9 * (len(ordered) - 1))]:.0f}"
