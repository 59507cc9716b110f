"""Answers that yielded no usable function, and whose fault that was (issue 51).

An attempt is *not parseable* when the loop got no function of the target's name out of the model's
reply: no usable code at all (verdict `no_code`), or code that does not parse, does not define the
target, or defines it as a stub (verdict `signature` with one of those reasons; a def whose parameters
do not fit is a usable function that does not fit, not counted here).

For each one the record keeps the model's raw reply (`TaskRecord.replies`, failed extractions only, host
paths taken out), and `owner` looks for a complete definition of the target in it by a second route,
independent of debugging/extraction.py: the content between every pair of fence-like lines (any fence
character and length, any info string, `>>> ` prompts dropped), and every run of lines that starts at a
`def name(` line and goes on while lines are blank or indented deeper (Python's own block rule), each
parsed with `ast.parse`. If that route finds a def of the target with a real body (not only a docstring,
`pass`, `...` or `raise NotImplementedError`), the extractor missed it: pycapsule's loss. Otherwise the
reply holds no such definition: the model's own, unless the request's time limit cut the reply off as it
was written (its headline says so; on a loaded machine), counted apart as neither.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pycapsule.capsule import is_stub_statement
from pycapsule.parsing import parse_source

MODEL = "model"
PYCAPSULE = "pycapsule"
UNKNOWN = "unknown"
"""No raw reply recorded (records made before replies were kept): the attempt is counted, not judged."""
CUT_OFF = "cut off"
"""No definition in the reply, which the request's time limit cut off as it was written (a slow or loaded
machine): not lost to extraction, and not the model's doing either."""
_CUT_OFF_HEADLINE = "(cut off by the time limit)"
REQUEST_TIMEOUT = 300.0
"""The shipped `request_timeout` (config.py)."""

_NOT_PARSEABLE_REASONS = (
    "does not parse", "cannot be parsed", "does not compile", "does not define",
    "has a docstring but no body", "is still a stub",
)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_PROMPT = re.compile(r"^[ \t]*(>>>|\.\.\.)( |$)")
_MAX_FENCE_LINES = 200
"""Fence-like lines paired in one reply (pairs grow with the square of it)."""
_SECRET_VARIABLES = ("OPENAI_API_KEY",)
_CUT = 2000
"""The loop keeps at most this many characters of a reply with no code as the attempt's code."""


def not_parseable(verdict: str, headline: str) -> bool:
    """Whether an attempt's answer yielded no usable function of the target's name (see the module)."""
    if verdict == "no_code":
        return True
    return verdict == "signature" and any(reason in headline for reason in _NOT_PARSEABLE_REASONS)


def scrub(text: str, folders: Iterable[str | Path] = ()) -> str:
    """`text` without the machine's folders (`folders`, the home folder) or an API key from the
    environment: a reply is published with the records."""
    replacements = [(str(folder), "<folder>") for folder in folders if str(folder).strip("/")]
    replacements.append((str(Path.home()), "~"))
    for name in _SECRET_VARIABLES:
        secret = os.environ.get(name, "")
        if len(secret) >= 8:
            replacements.append((secret, "<secret>"))
    for old, new in sorted(replacements, key=lambda pair: -len(pair[0])):
        if old and old not in ("/", "~"):
            text = text.replace(old, new)
    return text


def _real_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    statements = list(function.body)
    if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant) \
            and isinstance(statements[0].value.value, str):
        statements = statements[1:]
    return any(not is_stub_statement(statement) for statement in statements)


def _defines(code: str, name: str) -> bool:
    """Whether `code` parses and defines `name` anywhere with a real body."""
    code = textwrap.dedent(code)
    try:
        tree = parse_source(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        if not any(_PROMPT.match(line) for line in code.split("\n")):
            return False
        return _defines(_without_prompts(code), name)
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name and _real_body(node)
        for node in ast.walk(tree)
    )


def _without_prompts(code: str) -> str:
    """A console session's code lines (`>>> ` and `... ` prompts dropped, output lines left out)."""
    return "\n".join(_PROMPT.sub("", line, count=1).removeprefix(" ") if _PROMPT.match(line) else ""
                     for line in code.split("\n")) + "\n"


def _fenced_pieces(lines: list[str]) -> Iterator[str]:
    """The text between every fence-like line and every later one of the same character."""
    fences = [(index, match.group(1)[0]) for index, line in enumerate(lines)
              if (match := _FENCE.match(line))][:_MAX_FENCE_LINES]
    for position, (start, char) in enumerate(fences):
        for end, other in fences[position + 1:]:
            if other == char:
                yield "\n".join(lines[start + 1:end]) + "\n"
        yield "\n".join(lines[start + 1:]) + "\n"  # an unterminated block runs to the end


def _def_runs(lines: list[str], name: str) -> Iterator[str]:
    """From every `def name(` line, the lines that belong to its block by indentation."""
    starts = re.compile(rf"^([ \t]*)(async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(")
    for index, line in enumerate(lines):
        match = starts.match(line)
        if match is None:
            continue
        indent = len(match.group(1).expandtabs())
        end = index + 1
        while end < len(lines):
            following = lines[end].expandtabs()
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                # a signature's continuation lines or a closing parenthesis at the def's depth
                if following.lstrip().startswith((")", "]")):
                    end += 1
                    continue
                break
            end += 1
        yield "\n".join(lines[index:end]) + "\n"


def definition_in(reply: str, name: str) -> bool:
    """Whether the reply holds a complete, parseable definition of `name` (the second route)."""
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if _defines(text, name):
        return True
    if any(_defines(piece, name) for piece in _fenced_pieces(lines)):
        return True
    stripped = _without_prompts(text).split("\n")
    return any(_defines(run, name) for source in (lines, stripped) for run in _def_runs(source, name))


def owner(reply: str | None, name: str, cut_off: bool = False) -> str:
    """Whose loss an unparseable answer is: `pycapsule` (a definition the extractor missed), `cut off` (none,
    in a reply the time limit cut off), `model`, or `unknown` with no reply recorded."""
    if reply is None:
        return UNKNOWN
    if definition_in(reply, name):
        return PYCAPSULE
    return CUT_OFF if cut_off else MODEL


def was_cut_off(record: Any, index: int, request_timeout: float = REQUEST_TIMEOUT) -> bool:
    """Whether the time limit cut attempt `index + 1`'s reply off: a `no_code` headline says so; a
    `signature` one does not, but such an attempt runs nothing after the model, so its seconds are the
    request's (the manifest does not record `request_timeout`: the shipped default unless told)."""
    headline = record.headlines[index] if index < len(record.headlines) else ""
    if _CUT_OFF_HEADLINE in headline:
        return True
    seconds = record.attempt_seconds[index] if index < len(record.attempt_seconds) else 0.0
    return record.verdicts[index] == "signature" and seconds >= request_timeout


@dataclass
class LostAnswers:
    """The run's unparseable answers, by owner."""

    attempts: list[tuple[str, int, str]] = field(default_factory=list)
    """(task id, attempt, owner) of each."""

    @property
    def total(self) -> int:
        return len(self.attempts)

    def count(self, who: str) -> int:
        return sum(1 for _, _, owner_ in self.attempts if owner_ == who)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"not_parseable": self.total, "model": self.count(MODEL),
                                "pycapsule": self.count(PYCAPSULE)}
        if self.count(CUT_OFF):
            data["cut_off_by_the_time_limit"] = self.count(CUT_OFF)
        if self.count(UNKNOWN):
            data["no_reply_recorded"] = self.count(UNKNOWN)
        data["pycapsule_attempts"] = [f"{task} #{attempt}" for task, attempt, who in self.attempts
                                      if who == PYCAPSULE]
        return data

    def line(self) -> str:
        text = (f"answers not parseable: {self.total}, of which the model's own: {self.count(MODEL)}, "
                f"pycapsule's: {self.count(PYCAPSULE)}")
        if self.count(CUT_OFF):
            text += f", cut off by the request's time limit with no definition yet: {self.count(CUT_OFF)}"
        if self.count(UNKNOWN):
            text += f", not judged (no reply recorded): {self.count(UNKNOWN)}"
        return text


def function_name(record: Any, names: dict[str, str] | None = None) -> str:
    """The task's function name: `names` (a dataset's entry points), the record's own, or its task id's
    qualname (realcode: `toolz/toolz/itertoolz.py::groupby`); '' when none says it."""
    if names and record.task_id in names:
        return names[record.task_id]
    if getattr(record, "function", ""):
        return str(record.function)
    _, separator, qualname = record.task_id.rpartition("::")
    return qualname.rpartition(".")[2] if separator else ""


def reply_of(record: Any, index: int) -> str | None:
    """The raw reply of attempt `index + 1`: as recorded, or (records made before replies were kept) a
    `no_code` attempt's code, which the loop set to the whole reply, stripped, when under its 2,000
    characters (a longer one was cut: not judged)."""
    replies = getattr(record, "replies", None) or {}
    if str(index + 1) in replies:
        return str(replies[str(index + 1)])
    if record.verdicts[index] == "no_code" and index < len(record.codes) and len(record.codes[index]) < _CUT:
        return str(record.codes[index])
    return None


def lost_answers(records: Iterable[Any], names: dict[str, str] | None = None,
                 request_timeout: float = REQUEST_TIMEOUT) -> LostAnswers:
    """Every unparseable attempt of `records` (reused generations too: each run counts its own answers),
    judged; `names` gives task ids' function names where the records do not."""
    found = LostAnswers()
    for record in records:
        for index, verdict in enumerate(record.verdicts):
            headline = record.headlines[index] if index < len(record.headlines) else ""
            if not not_parseable(verdict, headline):
                continue
            name = function_name(record, names)
            cut_off = was_cut_off(record, index, request_timeout)
            judged = owner(reply_of(record, index), name, cut_off) if name else UNKNOWN
            found.attempts.append((record.task_id, index + 1, judged))
    return found


def main(argv: list[str] | None = None) -> int:
    """`python3 -m pycapsule.bench.lost_answers RECORDS... [--dataset NAME]`: the count of each records file
    (`.jsonl` or `.jsonl.gz`), generations reused from another file left out; `--dataset` names the tasks'
    functions where the records do not (HumanEval's task ids are numbers)."""
    import argparse

    from pycapsule.bench.records import read_records

    parser = argparse.ArgumentParser(prog="python3 -m pycapsule.bench.lost_answers")
    parser.add_argument("records", nargs="+", type=Path)
    parser.add_argument("--dataset", help="a bench dataset whose entry points name the functions")
    args = parser.parse_args(argv)
    names: dict[str, str] = {}
    if args.dataset:
        from pycapsule.bench.datasets import load_tasks

        names = {task.task_id: task.entry_point for task in load_tasks(args.dataset)[1]}
    for path in args.records:
        records = [r for r in read_records(path).values() if not r.reused_from]
        lost = lost_answers(records, names)
        print(f"{path}: {len(records)} tasks generated; {lost.line()}")
        for task_id, attempt, who in lost.attempts:
            print(f"  {task_id} attempt {attempt}: {who}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
