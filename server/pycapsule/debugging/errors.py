"""Turn a sandbox RunResult into the few lines a model can act on, and a one-line headline.

The fix prompt gets `condense`: the first failing examples with Expected/Got, or the exception
type, message and the user-code line; fixed sentences for timeouts, recursion and memory; long
values shortened at both ends. Progress reports and diagnostics get `headline`. An example of the
project's documentation is named with its place ('README.md:42').
"""

from __future__ import annotations

from pycapsule.capsule import Capsule
from pycapsule.sandbox.api import ExampleFailure, ExceptionInfo, RunResult
from pycapsule.sandbox.report import documentation_example, fence_note, invisible_difference

MAX_FAILURES_SHOWN = 3
VALUE_LIMIT = 400
"""Characters of an expected/got value or message kept (both ends) in the fix prompt."""
HEADLINE_VALUE_LIMIT = 60

RECURSION = (
    "hit the recursion limit (RecursionError): check the base case, or use a loop instead of deep recursion."
)
MEMORY = "The code ran out of memory: look for a list, string or recursion that grows without bound."
CRASHED = "The sandbox could not run the code ({detail}); this is not a fault in the code."


def timeout_sentence(seconds: float) -> str:
    shown = f"{seconds:.0f}" if seconds >= 1 else f"{seconds:.1f}"
    return f"The code did not finish within {shown} s: look for an infinite loop or a very slow algorithm."


def shorten(text: str, limit: int = VALUE_LIMIT) -> str:
    """Keep both ends of a long value and say how much of the middle was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit // 2 - 20, 8)
    cut = len(text) - 2 * keep
    return f"{text[:keep]}... [{cut} characters cut] ...{text[-keep:]}"


def _one_line(text: str, limit: int) -> str:
    return shorten(" ".join(text.split()), limit)


def _where_they_differ(expected: str, got: str, limit: int = HEADLINE_VALUE_LIMIT) -> tuple[str, str]:
    """Expected and got on one line each, at most about `limit` characters: a longer value is cut only
    between words (at a space), the same place in both, from a little before where they first differ,
    and each cut is marked with '…' (the headline sits above the full values, so it shows the difference,
    not a value cut mid-way)."""
    expected, got = " ".join(expected.split()), " ".join(got.split())
    if len(expected) <= limit and len(got) <= limit:
        return expected, got
    same = next((i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
                min(len(expected), len(got)))
    start = expected.rfind(" ", 0, max(same - limit // 3, 0)) + 1

    def cut(value: str) -> str:
        piece = value[start:]
        if len(piece) > limit:
            end = piece.rfind(" ", 0, limit)
            piece = piece[: end if end > 0 else limit].rstrip(",;") + " …"
        return ("… " if start else "") + piece

    return cut(expected), cut(got)


def _value(text: str) -> str:
    """An expected/got value as it goes after 'Expected:' (multi-line values indented below)."""
    value = shorten(text.rstrip("\n"), VALUE_LIMIT)
    if not value:
        return "(nothing)"
    if "\n" in value:
        return "\n" + "\n".join("    " + line for line in value.split("\n"))
    return value


def _example_source(failure: ExampleFailure, limit: int = 200) -> str:
    """The example's code on one line; a documentation example's with its place ('f(1) (README.md:42)')."""
    place = documentation_example(failure)
    source = _one_line(failure.source, limit)
    return f"{source} ({place})" if place else source


def _exception_lines(what: str, info: ExceptionInfo) -> list[str]:
    if info.type == "RecursionError":
        return [f"{what} {RECURSION}"]
    if info.type == "MemoryError":
        return [f"{what} raised MemoryError. {MEMORY}"]
    message = shorten(info.message.strip(), VALUE_LIMIT)
    lines = [f"{what} raised {info.type}: {message}" if message else f"{what} raised {info.type}"]
    if info.line is not None and info.source_line:
        lines.append(f"at line {info.line}: {info.source_line.strip()}")
    return lines


def _failure_lines(failure: ExampleFailure) -> list[str]:
    source = _example_source(failure)
    if failure.note:
        return [f"Failed example: {source}", f"Note: {failure.note}."]
    if failure.exception is not None:
        return _exception_lines(source, failure.exception)
    what = "Failed example of the project's documentation" if failure.document else "Failed example"
    lines = [
        f"{what}: {source}",
        f"Expected: {_value(failure.expected)}",
        f"Got: {_value(failure.got)}",
    ]
    note = invisible_difference(failure.expected, failure.got) or fence_note(failure)
    return [*lines, f"Note: {note}."] if note else lines


def _failures(result: RunResult, capsule: Capsule | None) -> list[ExampleFailure]:
    """Failures of the capsule's function first, then any others, in report order."""
    failures = [failure for report in result.functions for failure in report.failures]
    if capsule is not None:
        failures.sort(key=lambda failure: failure.qualname != capsule.qualname)
    return failures


def _status_sentence(result: RunResult) -> str | None:
    if result.status == "timeout":
        return timeout_sentence(result.duration or 10.0)
    if result.status == "memory":
        return MEMORY
    if result.status == "killed":
        detail = result.detail.rstrip(".") or "killed by a signal"
        return f"The process died before finishing ({detail}): the code may crash the interpreter or exit."
    if result.status == "crashed":
        return CRASHED.format(detail=result.detail.rstrip(".") or "no detail")
    if result.status == "cancelled":
        return "The run was cancelled before the code finished."
    return None


def condense(result: RunResult, capsule: Capsule | None = None) -> str:
    """A few lines for the fix prompt: what failed, what was expected, what happened instead."""
    sentence = _status_sentence(result)
    if sentence:
        return sentence
    if result.module_error is not None:
        return "\n".join(_exception_lines("The module", result.module_error))
    lines: list[str] = []
    for report in result.functions:
        if report.parse_error:
            lines.append(f"The doctests of {report.qualname} cannot be parsed: {report.parse_error}")
    failures = _failures(result, capsule)
    for failure in failures[:MAX_FAILURES_SHOWN]:
        lines.extend(_failure_lines(failure))
    hidden = len(failures) - MAX_FAILURES_SHOWN
    if hidden > 0:
        lines.append(f"({hidden} more failing example{'s' if hidden > 1 else ''} not shown.)")
    if not lines:
        attempted = sum(report.attempted for report in result.functions)
        if attempted:
            return f"All {attempted} examples passed."
        return "There were no doctests to run, so the code is not verified."
    return "\n".join(lines)


def headline(result: RunResult) -> str:
    """One line for progress reports and diagnostics."""
    count, what = _headline(result)
    return f"{count}{what}"


def failure_line(result: RunResult) -> str:
    """The headline without its 'doctest failed (k of n): ': what failed, in one line."""
    return _headline(result)[1]


def _headline(result: RunResult) -> tuple[str, str]:
    """The headline in two parts: 'doctest failed (k of n): ' when examples failed (else ''), and what."""
    if result.status == "timeout":
        return "", f"timed out after {result.duration:.0f} s" if result.duration >= 1 else "timed out"
    if result.status == "memory":
        return "", "ran out of memory"
    if result.status == "cancelled":
        return "", "cancelled"
    if result.status in ("killed", "crashed"):
        word = "killed" if result.status == "killed" else "sandbox failed"
        return "", f"{word}: {_one_line(result.detail, 100)}" if result.detail else word
    if result.module_error is not None:
        error = result.module_error
        where = f" at line {error.line}" if error.line else ""
        return "", f"module error{where}: {error.type}: {_one_line(error.message, HEADLINE_VALUE_LIMIT)}"
    parse_errors = [report for report in result.functions if report.parse_error]
    if parse_errors:
        return "", f"doctests of {parse_errors[0].qualname} cannot be parsed"
    failures = _failures(result, None)
    attempted = sum(report.attempted for report in result.functions)
    if not failures:
        return "", f"doctests passed ({attempted} examples)" if attempted else "no doctests to run"
    failed = sum(report.failed for report in result.functions)
    count = f"doctest failed ({failed} of {attempted}): " if attempted > 1 else "doctest failed: "
    first = failures[0]
    source = _example_source(first, HEADLINE_VALUE_LIMIT)
    if first.note:
        return count, f"{source}: {first.note}"
    if first.exception is not None:
        message = _one_line(first.exception.message, HEADLINE_VALUE_LIMIT)
        return count, f"{source} raised {first.exception.type}: {message}".rstrip(": ")
    note = invisible_difference(first.expected, first.got)
    if note:
        return count, f"{source}: {note}"
    expected, got = _where_they_differ(first.expected, first.got)
    return count, f"{source} expected {expected or 'nothing'}, got {got or 'nothing'}"
