"""The doctest check of one module, in the engine's process (`engine_host`): its plan (the parse, the
functions whose doctests count, their content keys) and the run of the ones the server has no findings for,
in the sandbox of the project root's engine, told as findings per function and problems of none.

A file without `>>>` that the project's documentation does not use is not parsed for its doctests; a file
with a syntax error runs nothing. When a combined job times out, runs out of memory or is killed, its
functions run again one by one so that the culprit gets the diagnostic.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pygls.workspace.position_codec import PositionCodec

from pycapsule.capsule import Capsule
from pycapsule.doc_examples import documents_module, examples_in_file, fingerprint
from pycapsule.lsp import wording
from pycapsule.lsp.doctest_findings import findings_of, one_line
from pycapsule.lsp.doctest_keys import ModuleKeys
from pycapsule.lsp.documents import ParsedDocument, parse_text
from pycapsule.lsp.host_messages import CheckOutcome, CheckPlan, CheckRequest, PlannedFunction, Problem
from pycapsule.sandbox.api import RunResult

if TYPE_CHECKING:
    from pycapsule.engine import Engine

_INCOMPLETE = ("timeout", "memory", "killed")


def plan_check(request: CheckRequest) -> tuple[ParsedDocument, CheckPlan]:
    """The module parsed, and what of it to check."""
    document = parse_text(request.uri, None, request.text, PositionCodec())
    nothing = CheckPlan(document.outline, document.syntax_error, ())
    if document.syntax_error is not None:
        return document, nothing
    if ">>>" not in document.text and not _documented(document):
        return document, nothing  # no doctests: nothing to parse, nothing to run
    written = [c for c in document.capsules() if not c.is_stub]
    docs = examples_in_file(document.path, tuple(c.qualname for c in written), source=document.text)
    checked = [c for c in written if c.examples or c.doctest_error or c.qualname in docs]
    keys = ModuleKeys(document.text)
    functions = tuple(
        PlannedFunction(c.qualname, c.def_line, c.end_line,
                        keys.key(c.qualname, c.def_line) + fingerprint(docs.get(c.qualname, ())),
                        c.doctest_error)
        for c in checked
    )
    return document, CheckPlan(document.outline, None, functions)


def _documented(document: ParsedDocument) -> bool:
    """The project's documentation has examples of the module's functions (its text has none)."""
    return document.path is not None and documents_module(document.path)


def run_check(
    engine: Engine, document: ParsedDocument, targets: tuple[str, ...], cancel: threading.Event
) -> CheckOutcome | None:
    """The doctests of the functions `targets` run; None when `cancel` was set before they were done (a job
    running then is killed)."""
    capsules = {capsule.qualname: capsule for capsule in document.capsules()}
    by_name = {name: capsules[name] for name in targets if name in capsules}

    def check(names: tuple[str, ...]) -> RunResult | None:
        result = engine.check(document.text, document.path, names, cancel=cancel)
        return None if cancel.is_set() else result

    result = check(tuple(by_name))
    if result is None:
        return None
    results: list[tuple[str, RunResult]] = [(name, result) for name in by_name]
    if result.status in _INCOMPLETE and len(by_name) > 1:
        # One function's doctests hung or blew up the job: find out which, one by one.
        results = []
        for name in by_name:
            if (alone := check((name,))) is None:
                return None
            results.append((name, alone))
    return _outcome(results, by_name)


def _outcome(results: list[tuple[str, RunResult]], by_name: dict[str, Capsule]) -> CheckOutcome:
    findings = {}
    problems = []
    for name, outcome in results:
        capsule = by_name[name]
        if outcome.status == "ok":
            report = next((f for f in outcome.functions if f.qualname == name), None)
            findings[name] = findings_of(report, capsule) if report else ()
        elif outcome.status == "error" and outcome.module_error is not None:
            error = outcome.module_error
            message = one_line(wording.module_raised(error.type, error.message))
            problems.append(Problem((error.line or 1) - 1, message, None))
            break
        else:
            detail = outcome.detail or outcome.status
            message = one_line(wording.did_not_finish(detail))
            problems.append(Problem(capsule.def_line - 1, message, name))
    return CheckOutcome(findings, tuple(problems))
