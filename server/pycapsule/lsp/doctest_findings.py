"""What a doctest check found in one function (`Finding`), from the sandbox's report: where, relative to the
function's first line, and in what words. Made in the engine's process (`doctest_check`), where the check
runs; the server (`diagnostics`) caches the findings per content key and turns them into diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import Capsule
from pycapsule.debugging.sandbox_lacks import unrunnable
from pycapsule.doc_examples import documentation_root
from pycapsule.lsp import wording
from pycapsule.sandbox.api import ExampleFailure, FunctionReport

_MESSAGE_LIMIT = 240


@dataclass(frozen=True)
class Finding:
    """One problem of one function, its line relative to the function's first line."""

    relative_line: int
    message: str
    exception_line: int | None = None
    cannot_run: bool = False
    """The example fails only for what the sandbox lacks (the network, a file the docstring names)."""
    document: tuple[Path, int] | None = None
    """An example of the project's documentation: its file and 1-based line (the finding is on the def)."""


def one_line(text: str) -> str:
    text = " ⏎ ".join(line.strip() for line in text.strip().splitlines()) or "nothing"
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def failure_message(failure: ExampleFailure) -> str:
    if failure.note:
        return one_line(wording.doctest_failed(failure.note))
    if failure.exception is not None:
        return one_line(wording.doctest_raised(failure.exception.type, failure.exception.message))
    return wording.doctest_got(one_line(failure.expected), one_line(failure.got))


def findings_of(report: FunctionReport, capsule: Capsule) -> tuple[Finding, ...]:
    if report.parse_error:
        return (Finding(0, one_line(wording.cannot_read_doctests(report.parse_error))),)
    reasons = unrunnable(report, capsule)
    root = documentation_root(capsule.path) if report.documented else None
    if reasons:
        return tuple(
            _placed(Finding(failure.line - capsule.def_line,
                            one_line(wording.cannot_run_in_sandbox(why)), cannot_run=True),
                    failure, root)
            for failure, why in zip(report.failures, reasons, strict=True)
        )
    return tuple(
        _placed(Finding(failure.line - capsule.def_line, failure_message(failure),
                        _raised_inside(failure, capsule)), failure, root)
        for failure in report.failures
    )


def _placed(finding: Finding, failure: ExampleFailure, root: Path | None) -> Finding:
    """A documentation example's finding goes on the def line, naming its file and line; a docstring's
    stays at its example."""
    if failure.document is None:
        return finding
    message = one_line(wording.in_the_documentation(failure.document, failure.line, finding.message))
    document = (root / failure.document, failure.line) if root is not None else None
    return Finding(0, message, finding.exception_line, finding.cannot_run, document)


def _raised_inside(failure: ExampleFailure, capsule: Capsule) -> int | None:
    """The raising line relative to the function, when the exception came from the function itself."""
    if failure.exception is None or failure.exception.line is None:
        return None
    if capsule.def_line <= failure.exception.line <= capsule.end_line:
        return failure.exception.line - capsule.def_line
    return None

