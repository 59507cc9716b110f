"""Doctest diagnostics: on open and save (debounced), the file's doctests run in the sandbox and
each failure is published at its example's line.

Only functions whose content key changed are run again (see doctest_keys.py); results are kept
relative to the function's first line, so moving a function does not re-run it. A file without
doctests costs nothing and a file with a syntax error runs nothing. Severity is Warning: a failing
doctest says the code and its documented examples disagree, not that the file is broken (the
file still imports and runs), and stubs awaiting generation are not run at all. A function whose
failing examples all fail only for what the sandbox lacks (the network, a file its docstring names) gets
Information diagnostics that say so, with their own code and no quick-fix: self-debugging cannot fix that.

A function's examples in the project's documentation (`pycapsule.doc_examples`: README, docs/) run with its
docstring's; one that fails is shown on the function's `def` line, its message naming the file and line
(`README.md:12: ...`) and its related information pointing there. They run again when the module is saved
(a change of the documentation alone is seen at the module's next save).

`DoctestDiagnostics` owns the checks: those waiting for their debounce, those running (one at a time, on
its own thread, so checks queue rather than compete for the sandbox), the findings cached per content
key, and what is published for each document. It holds an engine only while a check runs. A save
during a check stops it (its sandbox job is killed, nothing of it is published) and checks again.

What was published is kept per function with the function's text at the check, so it can be moved through
edits made since without running anything: `known` gives a function's diagnostics at its current lines while
its text is unchanged (the quick-fix does not depend on the client sending them back: Neovim keeps a
diagnostic's old line after an edit above it, eglot sends none at the end of a line), and `republish` moves
them after pycapsule's own edit (the applied function's are dropped: its doctests just passed).

Each publication also carries the Information diagnostics of the document's loosely pinned functions
(strength.py: a run passed them, but their examples and tests catch too few of their small changes), so one
`publishDiagnostics` holds everything said about the document. In a document that has one, the user's
edits republish too once typing pauses (`edited`), when those diagnostics moved or one ended (its function
changed): the doctest diagnostics are then moved the same way, a changed function's dropped until the next
check. A check that finds a function's doctests failing ends what strength.py keeps of it.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.capsule import Capsule
from pycapsule.debugging.sandbox_lacks import unrunnable
from pycapsule.doc_examples import documentation_root, documents_module, examples_in_file, fingerprint
from pycapsule.lsp.configuration import Configuration
from pycapsule.lsp.doctest_keys import ModuleKeys
from pycapsule.lsp.documents import CapsuleOutline, ParsedDocument, parse_text
from pycapsule.lsp.engines import Engines
from pycapsule.lsp.positions import lines_text
from pycapsule.lsp.protocol import CANNOT_RUN_CODE, DIAGNOSTIC_CODE, DIAGNOSTIC_SOURCE
from pycapsule.lsp.status import log
from pycapsule.lsp.strength import Strengths
from pycapsule.sandbox.api import ExampleFailure, FunctionReport, RunResult

DEBOUNCE_SECONDS = 0.2
_CACHE_SIZE = 4096
_MESSAGE_LIMIT = 240
_INCOMPLETE = ("timeout", "memory", "killed")


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
        return one_line(f"doctest failed: {failure.note}")
    if failure.exception is not None:
        return one_line(f"doctest failed: {failure.exception.type}: {failure.exception.message}")
    return f"doctest failed: expected {one_line(failure.expected)}, got {one_line(failure.got)}"


def findings_of(report: FunctionReport, capsule: Capsule) -> tuple[Finding, ...]:
    if report.parse_error:
        return (Finding(0, one_line(f"doctests cannot be read: {report.parse_error}")),)
    reasons = unrunnable(report, capsule)
    root = documentation_root(capsule.path) if report.documented else None
    if reasons:
        return tuple(
            _placed(Finding(failure.line - capsule.def_line,
                            one_line(f"doctest cannot run in the sandbox: it {why}"), cannot_run=True),
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
    place = f"{failure.document}:{failure.line}"
    message = one_line(f"{place} (the project's documentation): {finding.message}")
    document = (root / failure.document, failure.line) if root is not None else None
    return Finding(0, message, finding.exception_line, finding.cannot_run, document)


def _raised_inside(failure: ExampleFailure, capsule: Capsule) -> int | None:
    """The raising line relative to the function, when the exception came from the function itself."""
    if failure.exception is None or failure.exception.line is None:
        return None
    if capsule.def_line <= failure.exception.line <= capsule.end_line:
        return failure.exception.line - capsule.def_line
    return None


def _plan(document: ParsedDocument) -> tuple[list[Capsule], dict[str, str]]:
    """Off the event loop: the functions whose doctests count (their docstring's or their documentation
    examples), and their content keys (which the documentation examples are part of)."""
    written = [c for c in document.capsules() if not c.is_stub]
    docs = examples_in_file(document.path, tuple(c.qualname for c in written), source=document.text)
    checked = [c for c in written if c.examples or c.doctest_error or c.qualname in docs]
    keys = ModuleKeys(document.text)
    return checked, {c.qualname: keys.key(c.qualname, c.def_line) + fingerprint(docs.get(c.qualname, ()))
                     for c in checked}


def _documented(document: ParsedDocument) -> bool:
    """The project's documentation has examples of the module's functions (its text has none)."""
    return document.path is not None and documents_module(document.path)


def _moved(diagnostic: types.Diagnostic, lines: int, uri: str) -> types.Diagnostic:
    """A copy `lines` lines further down (up when negative), with what it relates to inside the function
    (in the document `uri`: a documentation file it points to stays as it is)."""
    moved = copy.deepcopy(diagnostic)
    related = [info.location.range for info in moved.related_information or () if info.location.uri == uri]
    for where in (moved.range, *related):
        where.start.line += lines
        where.end.line += lines
    return moved


@dataclass(frozen=True)
class _Shown:
    """What was published about one function, and the function as it was checked."""

    text: str
    """Its lines, first decorator to last body line: while they are the same, the diagnostics hold."""
    first_line: int
    """1-based, where those lines began when the diagnostics were published."""
    diagnostics: tuple[types.Diagnostic, ...]


@dataclass(frozen=True)
class _Published:
    functions: dict[str, _Shown]
    module: tuple[tuple[str, types.Diagnostic], ...]
    """Problems of no function (the module raised), with the text of their line when published."""


class _Stopped(Exception):
    """A newer save (or closing the document) stopped a check."""


class DoctestDiagnostics:
    def __init__(
        self, server: LanguageServer, configuration: Configuration, engines: Engines, strengths: Strengths
    ) -> None:
        self._server = server
        self._configuration = configuration
        self._engines = engines
        self._strengths = strengths
        self._results: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._checking: dict[str, tuple[asyncio.Task[None], threading.Event]] = {}
        """The running check of each document, and the event that stops it."""
        self._again: set[str] = set()
        self._published: dict[str, _Published] = {}
        """What each document's last published doctest diagnostics say, per function (see `known`)."""
        self._sent: dict[str, list[types.Diagnostic]] = {}
        """The loose-body diagnostics each document's last (non-empty) publication carried."""
        self._refresh: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-doctests")

    def schedule(self, uri: str) -> None:
        """Check `uri` once things have been quiet for DEBOUNCE_SECONDS."""
        if not self._configuration.settings_for(uri).diagnostics:
            return
        if (handle := self._pending.pop(uri, None)) is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(DEBOUNCE_SECONDS, self._start, uri)

    def _start(self, uri: str) -> None:
        self._pending.pop(uri, None)
        if uri in self._checking:
            self._again.add(uri)  # a save during a check: stop it, then check again
            self._checking[uri][1].set()
            return
        stop = threading.Event()
        task = asyncio.ensure_future(self._check(uri, stop))
        self._checking[uri] = (task, stop)
        task.add_done_callback(lambda _: self._checked(uri))

    def _checked(self, uri: str) -> None:
        self._checking.pop(uri, None)
        if uri in self._again:
            self._again.discard(uri)
            self._start(uri)

    def forget(self, uri: str) -> None:
        for pending in (self._pending, self._refresh):
            if (handle := pending.pop(uri, None)) is not None:
                handle.cancel()
        self._strengths.forget(uri)
        if (running := self._checking.get(uri)) is not None:
            running[1].set()
        self._again.discard(uri)
        self.clear(uri)

    def clear(self, uri: str) -> None:
        self._published.pop(uri, None)
        if self._sent.pop(uri, None) is not None:
            self._server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def edited(self, uri: str) -> None:
        """The user changed the document: when it has loosely pinned functions, once typing pauses for
        DEBOUNCE_SECONDS their diagnostics are placed again (moved, or dropped where the function changed)."""
        if not self._strengths.diagnosed(uri) or not self._configuration.settings_for(uri).diagnostics:
            return
        if (handle := self._refresh.pop(uri, None)) is not None:
            handle.cancel()
        self._refresh[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self._refreshed, uri)

    def _refreshed(self, uri: str) -> None:
        self._refresh.pop(uri, None)
        task = asyncio.ensure_future(self.republish(uri, loose_changed=True))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def known(self, document: ParsedDocument, function: CapsuleOutline) -> list[types.Diagnostic]:
        """The published diagnostics of `function` at its lines in `document`; none when it has none, or when
        its text changed since they were published (they no longer say anything about it). Cheap: one slice
        of the document compared, for a code action on every cursor move."""
        published = self._published.get(document.uri)
        shown = published.functions.get(function.qualname) if published is not None else None
        if shown is None or lines_text(document.index, function.first_line, function.end_line) != shown.text:
            return []
        lines = function.first_line - shown.first_line
        return [_moved(diagnostic, lines, document.uri) if lines else diagnostic
                for diagnostic in shown.diagnostics]

    async def republish(self, uri: str, loose_changed: bool = False) -> None:
        """After pycapsule's own edit: the published diagnostics moved to where their functions are now,
        without running anything; a function whose text changed (the one just applied) loses its own. With
        the loose-body diagnostics as they are now. `loose_changed`: only when those moved or one ended."""
        published = self._published.get(uri)
        if published is None and not self._strengths.diagnosed(uri):
            return
        if uri not in self._server.workspace.text_documents:
            return
        source = self._server.workspace.get_text_document(uri)
        codec = self._server.workspace.position_codec
        # Parsed off the event loop (not on the checks' thread, which may be busy with a long check).
        document = await asyncio.get_running_loop().run_in_executor(
            None, parse_text, uri, source.version, source.source, codec
        )
        if self._published.get(uri) is not published or document.syntax_error is not None:
            return  # a check published meanwhile, or there is nothing to place the diagnostics in
        if loose_changed and self._strengths.diagnostics(document) == self._sent.get(uri, []):
            return
        published = published or _Published({}, ())
        functions = {}
        for outline in document.outline:
            diagnostics = self.known(document, outline)
            if diagnostics:
                shown = published.functions[outline.qualname]
                functions[outline.qualname] = _Shown(shown.text, outline.first_line, tuple(diagnostics))
        module = tuple(
            (line, diagnostic) for line, diagnostic in published.module
            if document.index.line_text(diagnostic.range.start.line) == line
        )
        diagnostics = [d for shown in functions.values() for d in shown.diagnostics]
        diagnostics.extend(diagnostic for _, diagnostic in module)
        self._publish(document, diagnostics, _Published(functions, module))

    def shutdown(self) -> None:
        for handle in [*self._pending.values(), *self._refresh.values()]:
            handle.cancel()
        for _, stop in self._checking.values():
            stop.set()
        self._jobs.shutdown(wait=False, cancel_futures=True)

    async def _check(self, uri: str, stop: threading.Event) -> None:
        await self._configuration.ready.wait()  # the editor's settings may turn diagnostics off
        if not self._configuration.settings_for(uri).diagnostics:
            return
        try:
            source = self._server.workspace.get_text_document(uri)
            codec = self._server.workspace.position_codec
            # Parsed off the event loop: a large module would hold up requests for tens of ms.
            document = await asyncio.get_running_loop().run_in_executor(
                self._jobs, parse_text, uri, source.version, source.source, codec
            )
            await self._check_document(document, stop)
        except _Stopped:
            name = uri.rsplit("/", 1)[-1]
            log(self._server, f"doctests of {name}: stopped for a newer save, nothing published")
        except Exception as exc:  # diagnostics are a side show: report, never take the server down
            log(self._server, f"doctest diagnostics failed for {uri}: {exc}", types.MessageType.Error)

    async def _check_document(self, document: ParsedDocument, stop: threading.Event) -> None:
        nothing = _Published({}, ())
        if document.syntax_error is not None:
            # old lines no longer mean anything; the syntax error is the editor's
            self._publish(document, [], nothing)
            return
        loop = asyncio.get_running_loop()
        if ">>>" not in document.text and not await loop.run_in_executor(self._jobs, _documented, document):
            self._publish(document, [], nothing)  # no doctests: nothing to parse, nothing to run
            return
        checked, key_of = await loop.run_in_executor(self._jobs, _plan, document)
        if not checked:
            self._publish(document, [], nothing)
            return
        missing = [c for c in checked if key_of[c.qualname] not in self._results and not c.doctest_error]
        extra: list[types.Diagnostic] = []
        if missing:
            extra = await self._run(document, missing, key_of, stop)
        diagnostics = list(extra)
        for capsule in checked:
            if capsule.doctest_error:
                findings: tuple[Finding, ...] = (
                    Finding(0, one_line(f"doctests cannot be read: {capsule.doctest_error}")),
                )
            else:
                findings = self._results.get(key_of[capsule.qualname], ())
            diagnostics.extend(self._diagnostic(document, capsule, finding) for finding in findings)
            if findings:
                self._strengths.forget(document.uri, capsule.qualname)  # its examples fail as it is
        self._publish(document, diagnostics, _published(document, checked, diagnostics))
        ran, cached = len(missing), len(checked) - len(missing)
        name = document.path.name if document.path else document.uri
        log(
            self._server,
            f"doctests of {name}: ran {ran} function{'' if ran == 1 else 's'}, {cached} cached, "
            f"{len(diagnostics)} problem{'' if len(diagnostics) == 1 else 's'}",
        )

    async def _run(
        self, document: ParsedDocument, capsules: list[Capsule], key_of: dict[str, str], stop: threading.Event
    ) -> list[types.Diagnostic]:
        """Run the doctests of `capsules`, caching each function's findings; returns module-level problems.
        Raises _Stopped when `stop` is set before they are done."""
        by_name = {c.qualname: c for c in capsules}
        engine = await self._engines.acquire(document.uri)
        try:
            loop = asyncio.get_running_loop()

            async def check(targets: tuple[str, ...]) -> RunResult:
                result = await loop.run_in_executor(
                    self._jobs, partial(engine.check, cancel=stop), document.text, document.path, targets
                )
                if stop.is_set():
                    raise _Stopped()
                return result

            result = await check(tuple(by_name))
            if result.status in _INCOMPLETE and len(by_name) > 1:
                # One function's doctests hung or blew up the job: find out which, one by one.
                results = [(name, await check((name,))) for name in by_name]
            else:
                results = [(name, result) for name in by_name]
        finally:
            self._engines.release(engine)
        problems: list[types.Diagnostic] = []
        for name, outcome in results:
            capsule = by_name[name]
            if outcome.status == "ok":
                report = next((f for f in outcome.functions if f.qualname == name), None)
                self._remember(key_of[name], findings_of(report, capsule) if report else ())
            elif outcome.status == "error" and outcome.module_error is not None:
                error = outcome.module_error
                line0 = (error.line or 1) - 1
                message = one_line(f"the module raised {error.type}: {error.message}; no doctest ran")
                problems.append(self._make(document, line0, message, None))
                break
            else:
                detail = outcome.detail or outcome.status
                problems.append(
                    self._make(
                        document, capsule.def_line - 1, one_line(f"doctests did not finish: {detail}"), name
                    )
                )
        return problems

    def _remember(self, key: str, findings: tuple[Finding, ...]) -> None:
        self._results[key] = findings
        self._results.move_to_end(key)
        while len(self._results) > _CACHE_SIZE:
            self._results.popitem(last=False)

    def _diagnostic(self, document: ParsedDocument, capsule: Capsule, finding: Finding) -> types.Diagnostic:
        diagnostic = self._make(
            document, capsule.def_line - 1 + finding.relative_line, finding.message, capsule.qualname
        )
        if finding.cannot_run:
            diagnostic.severity, diagnostic.code = types.DiagnosticSeverity.Information, CANNOT_RUN_CODE
        related = []
        if finding.document is not None:
            file, line = finding.document
            start, end = types.Position(line - 1, 0), types.Position(line, 0)
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=file.as_uri(), range=types.Range(start, end)),
                message="the example, in the project's documentation",
            ))
        if finding.exception_line is not None:
            line0 = capsule.def_line - 1 + finding.exception_line
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=document.uri, range=document.index.line_range(line0)),
                message="raised here",
            ))
        if related:
            diagnostic.related_information = related
        return diagnostic

    @staticmethod
    def _make(document: ParsedDocument, line0: int, message: str, qualname: str | None) -> types.Diagnostic:
        data: dict[str, Any] = {"qualname": qualname} if qualname else {}
        return types.Diagnostic(
            range=document.index.line_range(line0),
            message=message,
            severity=types.DiagnosticSeverity.Warning,
            source=DIAGNOSTIC_SOURCE,
            code=DIAGNOSTIC_CODE,
            data=data or None,
        )

    def _publish(
        self, document: ParsedDocument, diagnostics: list[types.Diagnostic], published: _Published
    ) -> None:
        """The doctest diagnostics (`published`: by function) with the loose-body ones, in one publication
        (none when there is nothing to say and nothing was said)."""
        uri = document.uri
        wanted = self._configuration.settings_for(uri).diagnostics
        loose = self._strengths.diagnostics(document) if wanted else []
        if diagnostics:
            self._published[uri] = published
        else:
            self._published.pop(uri, None)
        if not diagnostics and not loose and uri not in self._sent:
            return
        self._server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[*diagnostics, *loose], version=document.version
            )
        )
        if diagnostics or loose:
            self._sent[uri] = loose
        else:
            self._sent.pop(uri, None)


def _published(
    document: ParsedDocument, checked: list[Capsule], diagnostics: list[types.Diagnostic]
) -> _Published:
    """The diagnostics of one check, by function (with the function's text then) and for the module."""
    by_name = {capsule.qualname: capsule for capsule in checked}
    grouped: dict[str, list[types.Diagnostic]] = {}
    module = []
    for diagnostic in diagnostics:
        data = diagnostic.data
        qualname = data.get("qualname") if isinstance(data, dict) else None
        if qualname in by_name:
            grouped.setdefault(qualname, []).append(diagnostic)
        else:
            module.append((document.index.line_text(diagnostic.range.start.line), diagnostic))
    functions = {
        name: _Shown(
            lines_text(document.index, by_name[name].def_line, by_name[name].end_line),
            by_name[name].def_line,
            tuple(found),
        )
        for name, found in grouped.items()
    }
    return _Published(functions, tuple(module))
