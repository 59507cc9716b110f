"""RunResult -> what a person reads in a terminal, or plain JSON."""

from __future__ import annotations

import dataclasses
import unicodedata
from typing import Any

from pycapsule.sandbox.api import ExampleFailure, ExceptionInfo, FunctionReport, MissingResource, RunResult


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.rstrip("\n").splitlines()) or prefix


def describe_exception(info: ExceptionInfo) -> str:
    where = f" at line {info.line}: {info.source_line}" if info.line else ""
    return f"{info.type}: {info.message}{where}"


def missing_note(missing: MissingResource) -> str:
    """Why an example met a missing network or file: the sandbox's limits, in one sentence."""
    if missing.kind == "network":
        return "the sandbox has no network, so this example cannot pass here"
    if missing.kind == "read-only":
        return "it writes where the sandbox is read-only (it may write only in its working folder and /tmp)"
    if missing.kind == "denied":
        return "the sandbox may not open a file or folder it needs"
    return "a file or folder it needs is not in the sandbox (it shows the project folder, read-only)"


def invisible_difference(expected: str, got: str) -> str | None:
    """One sentence when `expected` and `got` differ in a way a terminal does not show (whitespace, line
    endings, Unicode forms), naming the first differing line by its repr; None otherwise."""
    if expected == got:
        return None
    squeeze = "".join(expected.split()) == "".join(got.split())
    same_form = unicodedata.normalize("NFC", expected) == unicodedata.normalize("NFC", got)
    if not (squeeze or same_form):
        return None
    kind = "whitespace" if squeeze else "Unicode normalization"
    wanted, printed = expected.split("\n"), got.split("\n")
    for number, (want_line, got_line) in enumerate(zip(wanted, printed, strict=False), start=1):
        if want_line != got_line:
            return (f"they differ only in {kind}: line {number} expected {want_line!r}, got {got_line!r}")
    return f"they differ only in {kind}: expected {len(wanted)} lines, got {len(printed)}"


def documentation_example(failure: ExampleFailure) -> str:
    """Where a failing example of the project's documentation is: 'README.md:42' ('' for a docstring's)."""
    return f"{failure.document}:{failure.line}" if failure.document else ""


def fence_note(failure: ExampleFailure) -> str | None:
    """One sentence when a documentation example's expected output ends in a Markdown code fence: doctest
    (and pytest) read the expected lines up to a blank line, so the fence became part of them."""
    last = failure.expected.rstrip("\n").rpartition("\n")[2].strip()
    if failure.document is None or not last.startswith(("```", "~~~")):
        return None
    return (f"the expected output ends in the code fence {last!r}: doctest reads it up to a blank line, as "
            "pytest does; put a blank line before the fence")


def _documented(function: FunctionReport) -> str:
    """', 2 of them in README.md' when some of a function's examples are the project's documentation's."""
    if not function.documented:
        return ""
    return f", {function.documented} of them in {', '.join(function.documents)}"


def text_report(result: RunResult, path: str) -> list[str]:
    """Per function, per failing example; the non-ok statuses in one line each."""
    lines: list[str] = []
    for function in result.functions:
        if function.parse_error:
            lines.append(f"ERROR {function.qualname}: {function.parse_error}")
            continue
        if function.failed == 0 and function.attempted == 0 and function.skipped:
            lines.append(f"SKIP  {function.qualname} ({function.skipped} examples skipped: nothing verified)")
            continue
        if function.failed == 0:
            lines.append(f"PASS  {function.qualname} ({function.attempted} examples{_documented(function)})")
            continue
        lines.append(f"FAIL  {function.qualname}: {function.failed} of {function.attempted} examples failed"
                     f"{_documented(function)}")
        for failure in function.failures:
            where = f"{failure.document}:{failure.line}" if failure.document else f"{path}:{failure.line}"
            lines.append(f"  {where}: >>> {failure.source}")
            lines.append("    expected:")
            lines.append(_indent(failure.expected))
            if failure.note:
                lines.append(f"    note: {failure.note}")
            fence = fence_note(failure)
            if fence:
                lines.append(f"    note: {fence}")
            if failure.exception is not None:
                lines.append("    raised: " + describe_exception(failure.exception))
                if failure.exception.missing is not None:
                    lines.append("    note: " + missing_note(failure.exception.missing))
            else:
                lines.append("    got:")
                lines.append(_indent(failure.got))
                note = invisible_difference(failure.expected, failure.got)
                if note:
                    lines.append(f"    note: {note}")
    if result.module_error is not None:
        error = result.module_error
        location = f"{path}:{error.line}" if error.line else path
        lines.append(f"ERROR {location}: the module raised {describe_exception(error)}")
    if result.status not in ("ok", "error"):
        lines.append(f"{result.status.upper()}: {result.detail}")
    if result.output_truncated:
        lines.append("(the job's output was truncated)")
    return lines


def json_report(result: RunResult) -> dict[str, Any]:
    data = dataclasses.asdict(result)
    del data["lines_run"]  # a generation's measure, not part of check's document
    data["passed"] = result.passed
    return data
