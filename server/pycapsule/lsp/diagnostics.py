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

`DoctestDiagnostics` owns the checks: those waiting for their debounce, those running, the findings cached
per content key, and what is published for each document. The check itself happens in the engine's process
(`engine_process`, `doctest_check`: the parse, the content keys, the sandbox job, one check at a time so they
queue rather than compete for the sandbox), with the engine of the document's project; this process sends
the saved text, runs only the functions whose keys it has no findings for, and publishes. A save during a
check stops it (its sandbox job is killed, nothing of it is published) and checks again.

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
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.lsp import wording
from pycapsule.lsp.configuration import Configuration
from pycapsule.lsp.doctest_findings import Finding, one_line
from pycapsule.lsp.documents import CapsuleOutline, ParsedDocument, document_path, parse_text
from pycapsule.lsp.engine_process import EngineProcess
from pycapsule.lsp.host_messages import CheckPlan, CheckRequest, PlannedFunction
from pycapsule.lsp.positions import LineIndex, lines_text
from pycapsule.lsp.protocol import CANNOT_RUN_CODE, DIAGNOSTIC_CODE, DIAGNOSTIC_SOURCE
from pycapsule.lsp.remote import RemoteCheck
from pycapsule.lsp.status import log
from pycapsule.lsp.strength import Strengths

DEBOUNCE_SECONDS = 0.2
_CACHE_SIZE = 4096


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


class _Stop:
    """Stops one check, on the event loop: what it has in the engine's process is cancelled."""

    def __init__(self) -> None:
        self.is_set = False
        self._remote: RemoteCheck | None = None

    def set(self) -> None:
        self.is_set = True
        if self._remote is not None:
            self._remote.cancel()

    def follow(self, remote: RemoteCheck) -> None:
        self._remote = remote
        if self.is_set:
            remote.cancel()


class DoctestDiagnostics:
    def __init__(
        self, server: LanguageServer, configuration: Configuration, engine_process: EngineProcess,
        strengths: Strengths,
    ) -> None:
        self._server = server
        self._configuration = configuration
        self._engine_process = engine_process
        self._strengths = strengths
        self._results: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._checking: dict[str, tuple[asyncio.Task[None], _Stop]] = {}
        """The running check of each document, and the event that stops it."""
        self._again: set[str] = set()
        self._published: dict[str, _Published] = {}
        """What each document's last published doctest diagnostics say, per function (see `known`)."""
        self._sent: dict[str, list[types.Diagnostic]] = {}
        """The loose-body diagnostics each document's last (non-empty) publication carried."""
        self._refresh: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

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
        stop = _Stop()
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

    async def _check(self, uri: str, stop: _Stop) -> None:
        await self._configuration.ready.wait()  # the editor's settings may turn diagnostics off
        settings = self._configuration.settings_for(uri)
        if not settings.diagnostics:
            return
        try:
            source = self._server.workspace.get_text_document(uri)
            text, version, path = source.source, source.version, document_path(uri)
            request = CheckRequest(uri, path, text, settings, self._configuration.project_anchor(uri))
            remote = self._engine_process.check(request)
            stop.follow(remote)
            try:
                plan = await remote.planned
                if stop.is_set:
                    raise _Stopped()
                index = LineIndex(text, self._server.workspace.position_codec)
                document = ParsedDocument(uri, version, text, path, index, plan.outline, plan.syntax_error)
                await self._check_document(document, plan, remote, stop)
            finally:
                remote.drop()  # the host's checks queue behind one that waits to be let go
        except _Stopped:
            name = uri.rsplit("/", 1)[-1]
            log(self._server, wording.check_stopped(name))
        except Exception as exc:  # diagnostics are a side show: report, never take the server down
            log(self._server, wording.check_failed(uri, exc), types.MessageType.Error)

    async def _check_document(
        self, document: ParsedDocument, plan: CheckPlan, remote: RemoteCheck, stop: _Stop
    ) -> None:
        if not plan.functions:
            # no doctests, or a syntax error: old lines no longer mean anything (the error is the editor's)
            self._publish(document, [], _Published({}, ()))
            return
        checked = plan.functions
        missing = [f for f in checked if f.key not in self._results and not f.doctest_error]
        diagnostics: list[types.Diagnostic] = []
        if missing:
            diagnostics = await self._run(document, missing, remote, stop)
        for function in checked:
            if function.doctest_error:
                findings: tuple[Finding, ...] = (
                    Finding(0, one_line(wording.cannot_read_doctests(function.doctest_error))),
                )
            else:
                findings = self._results.get(function.key, ())
            diagnostics.extend(self._diagnostic(document, function, finding) for finding in findings)
            if findings:
                self._strengths.forget(document.uri, function.qualname)  # its examples fail as it is
        self._publish(document, diagnostics, _published(document, checked, diagnostics))
        ran, cached = len(missing), len(checked) - len(missing)
        name = document.path.name if document.path else document.uri
        log(self._server, wording.checked(name, ran, cached, len(diagnostics)))

    async def _run(
        self, document: ParsedDocument, functions: list[PlannedFunction], remote: RemoteCheck, stop: _Stop
    ) -> list[types.Diagnostic]:
        """Run the doctests of `functions` in the engine's process, caching each one's findings; returns the
        problems of no example (the module raised, doctests that did not finish). Raises _Stopped when `stop`
        is set before they are done."""
        remote.go(tuple(function.qualname for function in functions))
        outcome = await remote.checked
        if stop.is_set or outcome is None:
            raise _Stopped()
        key_of = {function.qualname: function.key for function in functions}
        for name, findings in outcome.findings.items():
            self._remember(key_of[name], findings)
        return [self._make(document, problem.line0, problem.message, problem.qualname)
                for problem in outcome.problems]

    def _remember(self, key: str, findings: tuple[Finding, ...]) -> None:
        self._results[key] = findings
        self._results.move_to_end(key)
        while len(self._results) > _CACHE_SIZE:
            self._results.popitem(last=False)

    def _diagnostic(
        self, document: ParsedDocument, function: PlannedFunction, finding: Finding
    ) -> types.Diagnostic:
        diagnostic = self._make(
            document, function.def_line - 1 + finding.relative_line, finding.message, function.qualname
        )
        if finding.cannot_run:
            diagnostic.severity, diagnostic.code = types.DiagnosticSeverity.Information, CANNOT_RUN_CODE
        related = []
        if finding.document is not None:
            file, line = finding.document
            start, end = types.Position(line - 1, 0), types.Position(line, 0)
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=file.as_uri(), range=types.Range(start, end)),
                message=wording.IN_THE_DOCUMENTATION,
            ))
        if finding.exception_line is not None:
            line0 = function.def_line - 1 + finding.exception_line
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=document.uri, range=document.index.line_range(line0)),
                message=wording.RAISED_HERE,
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
    document: ParsedDocument, checked: tuple[PlannedFunction, ...], diagnostics: list[types.Diagnostic]
) -> _Published:
    """The diagnostics of one check, by function (with the function's text then) and for the module."""
    by_name = {function.qualname: function for function in checked}
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
