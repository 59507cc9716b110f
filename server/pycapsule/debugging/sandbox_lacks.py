"""Examples the sandbox cannot check: they need the network, which it never has, or a file or folder that
the function's own text names (an example's argument, a default value) and that is not there, is read-only
there or may not be opened. Such a
failure says nothing about the body, so the loop does not feed it back as one: a body whose every failure
is of this kind is kept, marked not verified, with the reason."""

from __future__ import annotations

import re

from pycapsule.capsule import Capsule
from pycapsule.debugging.statements import bound_names
from pycapsule.parsing import parse_source
from pycapsule.sandbox.api import ExampleFailure, FunctionReport, MissingResource, RunResult

HEADLINE_START = "examples cannot run in the sandbox"
_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"")
_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


def _quoted(text: str) -> list[str]:
    return [single or double for single, double in _QUOTED.findall(text)]


def _paths_named(detail: str) -> list[str]:
    """The paths an error message names: its quoted strings, or else its words with a slash in them."""
    return _quoted(detail) or [word.strip(".,;:()") for word in detail.split() if "/" in word]


def _names_written(path: str, written: str) -> bool:
    """`path` is the string the user wrote, a folder on its way, or that string inside a folder."""
    path, written = path.rstrip("/") or path, written.rstrip("/") or written
    return (path == written or written.startswith(path + "/")
            or path.endswith("/" + written.removeprefix("./")))


_FILE_WHY = {"file": "needs {path!r}, which is not there",
             "read-only": "writes {path!r}, which is read-only there",
             "denied": "needs {path!r}, which the sandbox may not open"}


def _why(missing: MissingResource, written: list[str]) -> str | None:
    if missing.kind == "network":
        return "needs the network"
    for path in _paths_named(missing.detail):
        if any(_names_written(path, text) for text in written):
            return _FILE_WHY[missing.kind].format(path=path)
    return None


def _bound_names(source: str) -> set[str]:
    try:
        return {name for statement in parse_source(source).body for name in bound_names(statement)}
    except SyntaxError:
        return set()


def _reasons(failures: tuple[ExampleFailure, ...], written: list[str]) -> list[str] | None:
    """Why each failure is the sandbox's, in order; None when one of them is the code's. A NameError for a
    name that an earlier example of the sandbox's would have set counts with that example."""
    reasons: list[str] = []
    unset: set[str] = set()
    for failure in failures:
        info = failure.exception
        if info is None:
            return None
        why = _why(info.missing, written) if info.missing is not None else None
        if why is None and info.type == "NameError":
            name = _NOT_DEFINED.search(info.message)
            why = f"uses {name.group(1)!r}, which an example above would have set" \
                if name and name.group(1) in unset else None
        if why is None:
            return None
        unset |= _bound_names(failure.source)
        reasons.append(why)
    return reasons


def unrunnable(report: FunctionReport, capsule: Capsule) -> list[str] | None:
    """Why each failing example of `report` failed only for what the sandbox lacks, in order ([] when none
    failed); None when one of them is the code's, or when not all of them were reported."""
    if report.parse_error or len(report.failures) < report.failed:
        return None
    return _reasons(report.failures, _quoted(capsule.header + "\n" + (capsule.docstring or "")))


def sandbox_lacks(result: RunResult, capsule: Capsule) -> str | None:
    """One sentence when some examples failed and each failed only for what the sandbox lacks; None
    otherwise."""
    if result.status != "ok" or result.module_error is not None or result.passed:
        return None
    reasons: list[tuple[ExampleFailure, str]] = []
    for function in result.functions:
        found = unrunnable(function, capsule)
        if found is None:
            return None
        reasons += zip(function.failures, found, strict=True)
    attempted = sum(function.attempted for function in result.functions)
    first, why = reasons[0]
    return f"{HEADLINE_START} ({len(reasons)} of {attempted}): `{' '.join(first.source.split())}` {why}"
