"""Examples to offer for the changes the examples do not catch: a call on which the body and a surviving
mutant show different things, with what the body shows, for the user to confirm or correct.

The calls tried (built from the examples' own calls) run as one docstring of bare `>>> call` lines in the
sandbox, one job per module (the body twice, each survivor once): doctest reports each call that showed
something as failed, with what it showed or raised; a call it does not report showed nothing."""

from __future__ import annotations

import ast
import builtins
import contextlib
import itertools
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pycapsule.capsule import Capsule, Example, SourceLines, capsule_by_qualname
from pycapsule.config import project_root
from pycapsule.executor import job_for
from pycapsule.parsing import literal_eval, parse_expression, parse_source
from pycapsule.sandbox.api import DoctestItem, ExampleFailure, Job, Sandbox

if TYPE_CHECKING:
    from pycapsule.strength.mutants import Mutant

PROBE_LIMIT = 40  # below the 50 failures a sandbox report lists: a call it does not list showed nothing
OUTPUT_CHARS, OUTPUT_LINES = 300, 6  # a longer output is not offered
TRACEBACK = "Traceback (most recent call last):\n    ...\n"
_UNREADABLE = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)

_Slot = int | str  # a positional argument's index or a keyword's name
_Arguments = tuple[tuple[_Slot, Any], ...]
_Seed = tuple[str, _Arguments]
"""A call's receiver ('' for a function's call) and its literal arguments."""


@dataclass(frozen=True)
class SuggestedExample:
    call: str
    """The example's source, one line: 'late_fee(25)'."""
    output: str
    """What the body shows for it as doctest expects it ('' for nothing; an exception in doctest's form)."""
    mutant_output: str
    """What the surviving change shows for it, in the same form."""
    line: int
    change: str
    """The survivor's line and change."""

    def doctest(self) -> str:
        """'>>> late_fee(25)\\n10.0\\n': blank output lines written as <BLANKLINE>."""
        shown = [line if line.strip() else "<BLANKLINE>" for line in self.output.split("\n")]
        return "".join(f"{line}\n" for line in [f">>> {self.call}", *(shown if self.output else [])])

    def as_json(self) -> dict[str, object]:
        return {"call": self.call, "output": self.output, "line": self.line, "change": self.change,
                "doctest": self.doctest()}


def probe_calls(capsule: Capsule, limit: int = PROBE_LIMIT) -> tuple[str, ...]:
    """Call texts to try (`limit` at most), built from the examples' own calls of the function with literal
    arguments, each argument changed on its own: ints n±1, 0, -1, 2n, n+10, 10n, n+100 (a cap or threshold
    often lies far above the examples' values) and the other examples' values there; floats the midpoints
    between the examples' values there, ±1.0, 0.0, negated, 10n; strings empty, first character, doubled,
    uppercased, a space before or after; lists and tuples empty, first item only, reversed, last item once
    more; dicts empty; bools flipped. No call an example already makes. A method's calls keep their
    receiver when it stands alone (`Account(10).withdraw(3)`, `Account.parse('x')`, or a name an earlier
    example bound to such a call, written in its place: `acct.withdraw(3)` after `acct = Account(10)` is
    tried as `Account(10).withdraw(4)`). Async functions get none: their calls need an event loop."""
    if capsule.is_async:
        return ()
    seeds, made = example_calls(capsule.name, capsule.examples, method=bool(capsule.class_names))
    found: dict[str, str] = {}  # normalized text -> text
    for call in filter(None, _candidates(capsule.name, seeds)):
        if len(found) >= limit:
            break
        key = ast.unparse(parse_expression(call))
        if key not in made:
            found.setdefault(key, call)
    return tuple(found.values())


def example_calls(name: str, examples: Sequence[Example], *, method: bool = False
                  ) -> tuple[list[_Seed], set[str]]:
    """The literal arguments of the examples' calls of function `name` (with `method`, of `receiver.name`
    where the receiver stands alone: see `probe_calls`), and every such call's text (a receiver written
    in place of the name an example bound to it)."""
    seeds: list[_Seed] = []
    made: set[str] = set()
    bound: dict[str, str | None] = {}  # a name the examples bind -> the call it holds (None: other)
    for example in examples:
        try:
            tree = parse_source(example.source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            receiver = _receiver(node.func, name, method, bound)
            if receiver is None:
                continue
            made.add(_call_text(receiver, name, node))
            if all(k.arg for k in node.keywords):  # no `**mapping`; a `*sequence` is no literal
                with contextlib.suppress(*_UNREADABLE):
                    seeds.append((receiver, (*((i, literal_eval(a)) for i, a in enumerate(node.args)),
                                             *((str(k.arg), literal_eval(k.value)) for k in node.keywords))))
        if method:
            _bind(tree, bound)
    return seeds, made


def _call_text(receiver: str, name: str, call: ast.Call) -> str:
    """The call as `probe_calls` would write it: its receiver in place of the name bound to it."""
    if not receiver:
        return ast.unparse(call)
    func = ast.Attribute(value=parse_expression(receiver), attr=name, ctx=ast.Load())
    return ast.unparse(ast.Call(func=func, args=call.args, keywords=call.keywords))


def _receiver(func: ast.expr, name: str, method: bool, bound: dict[str, str | None]) -> str | None:
    """'' for a call of the function `name` itself; for a method's call, the text of a receiver that
    stands alone; None for any other call."""
    if not method:
        return "" if isinstance(func, ast.Name) and func.id == name else None
    if not isinstance(func, ast.Attribute) or func.attr != name:
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name):
        return bound.get(receiver.id, receiver.id)
    return ast.unparse(receiver) if _literal_call(receiver) else None


def _bind(tree: ast.AST, bound: dict[str, str | None]) -> None:
    """What the example's top-level assignments bind: a name set to a call with literal arguments holds
    that call's text; any other binding of it, None."""
    for statement in getattr(tree, "body", []):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                bound[target.id] = ast.unparse(statement.value) if _literal_call(statement.value) else None
                continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound[node.id] = None


def _literal_call(node: ast.expr) -> bool:
    """`Name(literals...)` or `Name.attribute(literals...)`: a call that stands alone."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
        return False
    if isinstance(node.func, ast.Attribute) and not isinstance(node.func.value, ast.Name):
        return False
    try:
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            literal_eval(argument)
    except _UNREADABLE:
        return False
    return all(k.arg for k in node.keywords)


def _candidates(name: str, seeds: list[_Seed]) -> Iterator[str | None]:
    for receiver, seed in seeds:
        for position, (slot, value) in enumerate(seed):
            there = [dict(other)[slot] for _, other in seeds if slot in dict(other)]
            for variant in _variants(value, there):
                arguments = [*seed[:position], (slot, variant), *seed[position + 1:]]
                yield render_call(f"{receiver}.{name}" if receiver else name, arguments)


def _variants(value: Any, there: list[Any]) -> list[Any]:
    """Values to try instead of `value` (`there`: every example's value at its place)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        others = [v for v in there if isinstance(v, int) and not isinstance(v, bool)]
        return [value + 1, value - 1, 0, -1, value * 2, value + 10, value * 10, value + 100, *others]
    if isinstance(value, float):
        numbers = sorted({float(v) for v in there if isinstance(v, int | float) and not isinstance(v, bool)})
        midpoints = [(a + b) / 2 for a, b in itertools.pairwise(numbers)]
        return [*midpoints, value + 1.0, value - 1.0, 0.0, -value, value * 10]
    if isinstance(value, str):
        return ["", value[:1], value * 2, value.upper(), f" {value}", f"{value} "]
    if isinstance(value, list | tuple):
        kind = type(value)
        return [kind(), kind(value[:1]), kind(reversed(value)), kind([*value, value[-1]])] if value else []
    if isinstance(value, dict):
        return [{}]
    return []


def render_call(name: str, arguments: Sequence[tuple[_Slot, Any]]) -> str | None:
    """`name(...)` with each value's repr, keywords kept; None when a repr does not read back as the value."""
    parts = []
    for slot, value in arguments:
        text = repr(value)
        try:
            if literal_eval(text) != value:
                return None
        except _UNREADABLE:
            return None
        parts.append(text if isinstance(slot, int) else f"{slot}={text}")
    return f"{name}({', '.join(parts)})"


def suggest_examples(sandbox: Sandbox, capsule: Capsule, source: str, survivors: Sequence[Mutant], *,
                     timeout: float, cancel: threading.Event | None = None, limit: int = 3
                     ) -> tuple[SuggestedExample, ...]:
    """For each survivor (in order) the first probe call on which the body (`source`) shows something else
    than it, with the body's output: at most one per survivor, `limit` in all, no call twice. A call whose
    body output differs between two runs, holds an address (' at 0x') or is long is not offered. At most
    2 + len(survivors) sandbox jobs; when `cancel` is set, what was found so far."""
    probes = probe_calls(capsule)
    if not probes or not survivors or limit <= 0:
        return ()
    cancelled = cancel.is_set if cancel is not None else lambda: False
    body = stable_outputs(sandbox, capsule, source, probes, timeout, cancel)
    if body is None:
        return ()
    found: list[SuggestedExample] = []
    for mutant in survivors:
        if len(found) >= limit or cancelled():
            break
        theirs = _probe_outputs(sandbox, capsule, mutant.source, probes, timeout, cancel)
        if theirs is None:
            continue
        taken = {example.call for example in found}
        for call, ours, its in zip(probes, body, theirs, strict=True):
            if ours is not None and its is not None and ours != its and call not in taken:
                found.append(SuggestedExample(call, ours, its, mutant.line, mutant.change))
                break
    return tuple(found)


def stable_outputs(sandbox: Sandbox, capsule: Capsule, module_source: str, probes: Sequence[str],
                   timeout: float, cancel: threading.Event | None) -> list[str | None] | None:
    """What each probe call shows on the module, run twice: None for a call whose output differs between
    the runs, cannot be told or is not presentable as an example; None when a run did not run them all
    (or `cancel` is set)."""
    if cancel is not None and cancel.is_set():
        return None
    runs = []
    for _ in range(2):
        outputs = _probe_outputs(sandbox, capsule, module_source, probes, timeout, cancel)
        if outputs is None:
            return None
        runs.append(outputs)
    first, second = runs
    return [a if a == b and a is not None and _presentable(a) else None
            for a, b in zip(first, second, strict=True)]


def _probe_outputs(sandbox: Sandbox, capsule: Capsule, module_source: str, probes: Sequence[str],
                   timeout: float, cancel: threading.Event | None) -> list[str | None] | None:
    """What each probe shows on the module (None: cannot be told, e.g. it ran into what the sandbox
    lacks); None when the job did not run them all."""
    job, item = _probe_job(capsule, module_source, probes, timeout)
    failures = _run_probes(sandbox, job, item, probes, cancel)
    if failures is None:
        return None
    name = job.module_name
    return ["" if failure is None else None if failure.note else _shown(failure, name, module_source)
            for failure in failures]


def probe_failures(sandbox: Sandbox, capsule: Capsule, module_source: str, probes: Sequence[str],
                   timeout: float, cancel: threading.Event | None) -> list[ExampleFailure | None] | None:
    """Each probe call run as a bare example on the module, in one job: doctest's report of what it showed
    or raised (None: it showed nothing); None when the job did not run them all."""
    job, item = _probe_job(capsule, module_source, probes, timeout)
    return _run_probes(sandbox, job, item, probes, cancel)


def _probe_job(capsule: Capsule, module_source: str, probes: Sequence[str], timeout: float
               ) -> tuple[Job, DoctestItem]:
    """The job that runs the probe calls as one docstring of bare examples, and that docstring."""
    item = DoctestItem(capsule.qualname, "".join(f">>> {call}\n" for call in probes), capsule.def_line)
    job = replace(job_for(capsule, module_source, timeout, project_root(capsule.path)), doctests=(item,),
                  trace_lines=False)
    return job, item


def _run_probes(sandbox: Sandbox, job: Job, item: DoctestItem, probes: Sequence[str],
                cancel: threading.Event | None) -> list[ExampleFailure | None] | None:
    result = sandbox.run(job, cancel)
    report = next((f for f in result.functions if f.qualname == item.qualname), None)
    if (result.status != "ok" or report is None or report.parse_error is not None
            or report.attempted != len(probes) or report.failed != len(report.failures)):
        return None
    found: list[ExampleFailure | None] = [None] * len(probes)
    for failure in report.failures:
        index = failure.line - item.line  # the worker numbers an example item.line + its docstring line
        if not 0 <= index < len(probes) or failure.source != probes[index]:
            return None
        found[index] = failure
    return found


def _shown(failure: ExampleFailure, module_name: str, module_source: str) -> str | None:
    """The failure as an example's expected output (no final newline)."""
    if failure.exception is None:
        return failure.got[:-1] if failure.got.endswith("\n") else None  # doctest expects whole lines
    info = failure.exception
    if info.missing is not None:
        return None
    name = info.type
    if not isinstance(getattr(builtins, name, None), type):
        # doctest names an exception class by its module, unless it is __main__'s or a builtin; one from
        # elsewhere (its module unknown here) is not shown
        if "." in name or not re.search(rf"^class {re.escape(name)}\b", module_source, re.MULTILINE):
            return None
        name = name if module_name == "__main__" else f"{module_name}.{name}"
    return f"{TRACEBACK}{name}: {info.message}" if info.message else f"{TRACEBACK}{name}"


def _presentable(output: str) -> bool:
    """Short, stable and readable back by doctest as the same output."""
    lines = output.split("\n")
    return (len(output) <= OUTPUT_CHARS and len(lines) <= OUTPUT_LINES and " at 0x" not in output
            and all(c.isprintable() or c == "\n" for c in output)
            and not any(line.lstrip(" ").startswith(">>>") for line in lines)
            and not lines[0].lstrip(" ").startswith("...")  # doctest would read it as the call's next line
            and (output.startswith(TRACEBACK) or not output.startswith("Traceback (most recent call last)")))


def add_examples(source: str, qualname: str, examples: Sequence[SuggestedExample],
                 path: Path | None = None) -> str:
    """The module text with the examples written into the function's docstring after its last example's
    output (before the closing quotes when it has none), indented as its `>>>` lines, in the module's line
    endings; nothing else changes. Backslashes (and quotes that would end it) are escaped in a docstring
    that is not raw; an example a raw docstring cannot hold (its closing quotes) is left out. ValueError
    when the function has no triple-quoted docstring whose doctests parse."""
    capsule = capsule_by_qualname(source, qualname, path)
    start, end = capsule.docstring_start, capsule.docstring_end
    if start is None or end is None or capsule.docstring is None or capsule.doctest_error is not None:
        raise ValueError(f"{qualname} has no docstring whose examples parse")
    literal = source[start:end]
    prefix = literal[: len(literal) - len(literal.lstrip("rRuU"))]
    quotes = literal[len(prefix): len(prefix) + 3]
    if quotes not in ('"""', "'''") or len(literal) < len(prefix) + 6 or not literal.endswith(quotes):
        raise ValueError(f"the docstring of {qualname} is not one triple-quoted string")
    written = [_written(example.doctest(), "r" in prefix.lower(), quotes[0]) for example in examples]
    lines_to_add = [line for lines in written if lines is not None for line in lines]
    if not lines_to_add:
        return source
    text, newline, closing = SourceLines(source), capsule.newline, end - 3
    first, last = text.line_of(start), text.line_of(end - 1)
    closing_line = source[text.start(last):closing]
    # where: (offset, text before the examples, text after them: closing quotes moved to their own line)
    if capsule.examples:
        if last - first != capsule.docstring.count("\n"):
            raise ValueError(f"the docstring of {qualname} has escaped line breaks: its lines are unsure")
        example = capsule.examples[-1]
        indent = _leading(text.line_text(example.line)) if example.line != first else capsule.indent
        block_end = example.line + _line_count(example.source) + _line_count(example.want) - 1
        where = (text.end(block_end), "", "") if block_end < last else (closing, newline, capsule.indent)
    else:
        body = [text.line_text(n) for n in range(first + 1, last)] + ([closing_line] if last > first else [])
        indent = min((_leading(line) for line in body if line.strip()), key=len, default=capsule.indent)
        if last > first and not closing_line.strip():
            where = (text.start(last), newline if text.line_text(last - 1).strip() else "", "")
        else:
            where = (closing, newline * 2, capsule.indent)
    at, before, after = where
    added = "".join(f"{indent}{line}{newline}" for line in lines_to_add)
    return source[:at] + before + added + after + source[at:]


def _written(doctest_text: str, raw: bool, quote: str) -> list[str] | None:
    """The example's lines as the docstring's literal must hold them to show them; None when it cannot."""
    if raw:
        return None if quote * 3 in doctest_text else doctest_text.split("\n")[:-1]
    escaped = doctest_text.replace("\\", "\\\\")
    if quote * 3 in escaped:
        escaped = escaped.replace(quote, "\\" + quote)
    return escaped.split("\n")[:-1]


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]
