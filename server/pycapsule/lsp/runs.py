"""Generation runs in the background: the engine's loop in the engine's process (`engine_process`), its
events turned into progress, status notifications and, at the end, one versioned edit.

Starting a run answers at once with the run's id (editors such as eglot wait for a command's answer
and give up after a few seconds): the server's outline names the function (`targets`), and the engine's
process parses the module and builds its capsule after the answer; what only that parse finds (the file does
not parse elsewhere) ends the run. When the outline cannot tell, the answer waits for the engine's process.
The end is reported by the progress' end, a message (shown when the client has no progress UI or the run
did not succeed, else logged) and a last `pycapsule/status` that carries the run id and its outcome. A
client without progress support also gets a message at the start.

One run per function at a time. A run stops when the user cancels it from the progress UI
(`window/workDoneProgress/cancel`), through the "Cancel ..." code action or the `pycapsule.cancel`
command; the engine checks the `cancel` event between streamed tokens, between attempts and while the sandbox
runs a candidate (the job is killed).

`Runs` owns the runs going on (by document and function). A run's news (`remote.News`: resolved, the engine's
events, its end) come from the engine's process's reader thread straight onto the event loop, where the run's
driver awaits them: no thread of its own, however many runs are under way.
What the events say is `pycapsule.event_text`'s; every other sentence here is `lsp.wording`'s.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec

from pycapsule import event_text
from pycapsule.capsule import Capsule
from pycapsule.lsp import wording
from pycapsule.lsp.apply import apply_outcome
from pycapsule.lsp.attempts import Attempts
from pycapsule.lsp.changes import ChangeSignal
from pycapsule.lsp.configuration import Configuration
from pycapsule.lsp.diagnostics import DoctestDiagnostics
from pycapsule.lsp.documents import Documents, document_path, parse_text
from pycapsule.lsp.engine_process import EngineProcess
from pycapsule.lsp.host_messages import Mode, Refusal, StartRequest
from pycapsule.lsp.positions import lines_text
from pycapsule.lsp.progress import RunProgress
from pycapsule.lsp.protocol import closest_title, run_title
from pycapsule.lsp.remote import Done, Event, Failed, Gone, RemoteRun, Resolved, Stopped
from pycapsule.lsp.status import State, log, send_status, show
from pycapsule.lsp.strength import Measured, Strengths
from pycapsule.lsp.targets import find_target

if TYPE_CHECKING:
    from pycapsule.events import Closest

_EDIT_TEXT_SECONDS = 5.0
"""How long after an applied edit its text may take to arrive before the diagnostics are no longer moved."""


_CLOSEST_KEPT = 20
"""Closest tries kept for the editor to apply (the oldest forgotten first): each holds its run's text."""


@dataclass(frozen=True)
class _Kept:
    started_from: StartRequest
    capsule: Capsule
    closest: Closest
    run_id: str


_run_numbers = itertools.count(1)


@dataclass
class Run:
    uri: str
    qualname: str
    name: str
    mode: Mode
    remote: RemoteRun
    id: str = field(default_factory=lambda: f"{os.getpid()}-{next(_run_numbers)}")
    stopped: bool = False
    progress_token: str | None = None

    def stop(self) -> None:
        """Called on the event loop: tells the engine's process, and the run's driver at once (`Stopped`)."""
        if not self.stopped:
            self.stopped = True
            self.remote.cancel()


def _why(news: Done | Failed | Gone | Stopped) -> str:
    """Why the host answered the start with no `Resolved`, as the end of a sentence."""
    if isinstance(news, Failed | Gone):
        return news.reason
    return wording.UNRESOLVED if isinstance(news, Done) else wording.CANCELLED


class Runs:
    def __init__(
        self,
        server: LanguageServer,
        documents: Documents,
        configuration: Configuration,
        engine_process: EngineProcess,
        attempts: Attempts,
        changes: ChangeSignal,
        diagnostics: DoctestDiagnostics,
        strengths: Strengths,
    ) -> None:
        self._server = server
        self._documents = documents
        self._configuration = configuration
        self._engine_process = engine_process
        self._attempts = attempts
        self._changes = changes
        self._diagnostics = diagnostics
        self._strengths = strengths
        self._runs: dict[tuple[str, str], Run] = {}
        self._closest: dict[tuple[str, str], _Kept] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def count(self) -> int:
        return len(self._runs)

    def running(self, uri: str, qualname: str) -> Run | None:
        return self._runs.get((uri, qualname))

    def cancel(self, uri: str | None = None, qualname: str | None = None, run_id: str | None = None) -> int:
        """Cancel the runs that match (all of them when nothing is given); returns how many."""
        matched = [
            run
            for run in self._runs.values()
            if (uri is None or run.uri == uri)
            and (qualname is None or run.qualname == qualname)
            and (run_id is None or run.id == run_id)
        ]
        for run in matched:
            run.stop()
        return len(matched)

    def cancel_progress(self, token: types.ProgressToken) -> None:
        for run in self._runs.values():
            if run.progress_token == token:
                run.stop()

    def shutdown(self) -> None:
        """Stop the runs (the engine's process, which has them, is closed after: `Services.close`)."""
        self.cancel()

    async def start(
        self, uri: str, text: str, qualname: str | None, line: int | None, mode: Mode
    ) -> dict[str, Any] | Refusal:
        """Start the loop for one function (by `qualname`, else the one holding the 0-based `line`) in the
        background: the answer of `workspace/executeCommand`, or why no run can start. The server's outline
        names the function (`targets`), and the engine's process parses the text meanwhile; when the outline
        cannot tell, the answer waits for the engine's process."""
        await self._configuration.ready.wait()
        found = find_target(self._documents, uri, text, qualname, line, mode)
        if isinstance(found, Refusal):
            return found
        request = StartRequest(
            uri=uri, path=document_path(uri), text=text, qualname=found.qualname if found else qualname,
            line=line, mode=mode, settings=self._configuration.settings_for(uri),
            project_anchor=self._configuration.project_anchor(uri),
        )
        if found is not None and (busy := self._busy(uri, found.qualname, found.name)):
            return busy
        remote, capsule = self._engine_process.start(request), None
        if found is None:
            news = await remote.next()
            if not isinstance(news, Resolved):
                message = wording.nothing_started(_why(news))
                show(self._server, message, types.MessageType.Error)
                return {"status": "error", "message": message}
            if isinstance(news.answer, Refusal):
                return news.answer
            if busy := self._busy(uri, news.answer.qualname, news.answer.name):
                remote.drop()
                return busy
            found = capsule = news.answer
        run = Run(uri, found.qualname, found.name, mode, remote)
        self._runs[(uri, found.qualname)] = run
        remote.go()
        self._background(self._run(run, request, capsule, str(request.settings.model or "")))
        return {"status": "started", "runId": run.id, "message": run_title(mode, found.name)}

    def _busy(self, uri: str, qualname: str, name: str) -> dict[str, Any] | None:
        if (uri, qualname) not in self._runs:
            return None
        message = wording.busy(name)
        show(self._server, message, types.MessageType.Warning)
        return {"status": "busy", "message": message}

    async def _run(
        self, run: Run, started_from: StartRequest, capsule: Capsule | None, model: str
    ) -> dict[str, Any]:
        """Drive the run to its end; `capsule`: the target's, once the engine's process has resolved it."""
        key = (run.uri, run.qualname)
        progress = RunProgress(self._server)
        try:
            title = run_title(run.mode, run.name)
            await progress.begin(title, wording.STARTING)
            run.progress_token = progress.token
            if progress.token is None:
                show(self._server, wording.started_without_progress(title))
            self._status("generating", title, run)
            return await self._follow(run, started_from, capsule, progress, model)
        except Exception as exc:  # a bug of ours: end the run visibly rather than leave it hanging
            log(self._server, wording.internal_error_logged(run.name, exc), types.MessageType.Error)
            return self._finish(run, progress, "error", wording.internal_error(run.name, exc))
        finally:
            self._runs.pop(key, None)

    async def _follow(
        self, run: Run, started_from: StartRequest, capsule: Capsule | None, progress: RunProgress, model: str
    ) -> dict[str, Any]:
        """The run's news from the engine's process, as they come, turned into progress and status."""
        # Imported on first use: the loop pulls in the openai client, seconds of start-up on a busy machine.
        from pycapsule.events import AttemptFinished, AttemptStarted, Finished, TokensStreamed

        outcome, max_attempts = None, 0
        attempt_mode = run.mode
        while not isinstance(news := await run.remote.next(), Done):
            if isinstance(news, Resolved):
                if isinstance(news.answer, Refusal):  # what only the whole module's parse finds
                    ended = wording.refused_run(run_title(run.mode, run.name), news.answer.reason)
                    return self._finish(run, progress, "error", ended)
                capsule = news.answer
                continue
            if not isinstance(news, Event):
                return self._finish(run, progress, *_ended(run, news))
            item = news.event
            if isinstance(item, Finished):
                outcome = item.outcome
                continue
            if isinstance(item, AttemptStarted):
                max_attempts, attempt_mode = item.max_attempts, item.mode
            if isinstance(item, TokensStreamed):
                continue  # the model's progress events say how the writing goes
            said = event_text.describe(item)
            if said is not None:
                attempt, text = said
                self._report(run, progress, attempt, max_attempts, text)
                if isinstance(item, AttemptFinished):
                    log(self._server, wording.attempt_logged(run.name, attempt, text, item.seconds))
                    if started_from.path is None:
                        self._attempts.remember_unsaved(run.uri, run.qualname, run_id=run.id,
                                                        mode=attempt_mode, model=model, finished=item)
        if outcome is None or capsule is None:
            return self._finish(run, progress, "error", wording.NO_OUTCOME)
        return await self._conclude(run, started_from, capsule, outcome, progress)

    async def _conclude(
        self, run: Run, started_from: StartRequest, capsule: Capsule, outcome: Any, progress: RunProgress
    ) -> dict[str, Any]:
        self._closest.pop((run.uri, run.qualname), None)
        # what an earlier run found of the function's strength holds no more, unless this one says nothing
        said = outcome.status not in ("cancelled", "error")
        dropped = said and self._strengths.forget(run.uri, run.qualname)
        closest = outcome.closest if outcome.status == "gave_up" else None
        if closest is not None and closest.edits:
            self._keep_closest(run, started_from, capsule, outcome)
        applied = None
        if outcome.status in ("passed", "passed_loosely", "not_verified") and outcome.edits:
            options = self._configuration.options_for(run.uri)
            applied = await apply_outcome(
                self._server, self._changes, started_from, capsule, outcome.edits, options
            )
        # before the run's last status: a hover right after it shows how the run ended
        told = applied.for_history if applied is not None else ""
        self._attempts.concluded(run.uri, started_from.path, run.id, outcome, told)
        measured = None
        if outcome.status in ("passed", "passed_loosely") and (applied is None or applied.state == "applied"):
            measured = await _measured(self._server.workspace.position_codec, run, started_from, outcome)
        if measured is not None:
            self._strengths.keep(run.uri, measured)
        kept = measured is not None
        if applied is not None and applied.state != "applied":
            status = "unconfirmed" if applied.state == "unconfirmed" else "refused"
            log(self._server, wording.not_applied_logged(run.name, applied.reason, applied.code))
            return self._finish(run, progress, status, applied.message, outcome.attempts, applied.code)
        if applied is not None:
            self._background(self._republish_after(run.uri, applied.version))
        elif dropped or kept:
            self._background(self._diagnostics.republish(run.uri))
        offered = closest if (run.uri, run.qualname) in self._closest else None
        summary = wording.run_end(run.name, outcome, kept, offered)
        return self._finish(run, progress, outcome.status, summary, outcome.attempts)

    def closest(self, uri: str, qualname: str) -> Closest | None:
        """The closest try of the last run that gave up on the function, while it can still be applied."""
        kept = self._closest.get((uri, qualname))
        return kept.closest if kept is not None else None

    async def apply_closest(self, uri: str, qualname: str) -> dict[str, Any]:
        """Apply the kept closest try (the user asked for it, knowing it fails), as a run's result is applied:
        one versioned edit, refused when the function changed since the run started."""
        kept = self._closest.get((uri, qualname))
        if kept is None:
            return {"status": "error", "message": wording.no_closest(qualname)}
        name = kept.capsule.name
        if (uri, qualname) in self._runs:
            return {"status": "busy", "message": wording.closest_busy(name)}
        options = self._configuration.options_for(uri)
        label = closest_title(name, kept.closest.attempt)
        applied = await apply_outcome(self._server, self._changes, kept.started_from, kept.capsule,
                                      kept.closest.edits, options, label=label)
        if kept.started_from.path is not None:
            self._attempts.applied(kept.run_id, kept.closest.attempt, applied.for_history)
        if applied.state != "applied":
            show(self._server, applied.message, types.MessageType.Warning)
            return {"status": "refused", "message": applied.message, "code": applied.code}
        self._closest.pop((uri, qualname), None)
        message = wording.closest_applied(name, kept.closest.attempt)
        log(self._server, message)
        self._background(self._republish_after(uri, applied.version))
        return {"status": "applied", "message": message}

    def _keep_closest(self, run: Run, started_from: StartRequest, capsule: Capsule, outcome: Any) -> None:
        self._closest[(run.uri, run.qualname)] = _Kept(started_from, capsule, outcome.closest, outcome.run_id)
        while len(self._closest) > _CLOSEST_KEPT:
            del self._closest[next(iter(self._closest))]

    def _background(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _republish_after(self, uri: str, version: int | None) -> None:
        """Once the editor reports the applied text, the file's diagnostics move with it (Neovim keeps a
        diagnostic's old line until it is published again)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _EDIT_TEXT_SECONDS
        while uri in self._server.workspace.text_documents and (
            self._server.workspace.get_text_document(uri).version == version
        ):
            if not await self._changes.wait(uri, deadline - loop.time()):
                return
        await self._diagnostics.republish(uri)

    def _report(self, run: Run, progress: RunProgress, attempt: int, max_attempts: int, what: str) -> None:
        total = max(max_attempts, attempt, 1)
        percentage = int(100 * (attempt - 1) / total) if attempt > 0 else 0
        progress.report(event_text.at_attempt(attempt, total, what), percentage)
        self._status("generating", what, run, attempt=attempt, max_attempts=total)

    def _status(self, state: State, message: str, run: Run, **counts: int | None) -> None:
        send_status(self._server, state, message, name=run.name, running=self.count, run_id=run.id,
                    endpoint=self._configuration.endpoint_for(run.uri), **counts)

    def _finish(
        self, run: Run, progress: RunProgress, status: str, message: str, attempts: int = 0, code: str = ""
    ) -> dict[str, Any]:
        progress.end(message)
        still_running = self.count - 1
        level = wording.level(status)
        if progress.token is None or level != types.MessageType.Info:
            show(self._server, message, level)  # the client has no progress UI, or the user must know
        else:
            log(self._server, message)
        state: State = "error" if status == "error" else "generating" if still_running else "idle"
        send_status(
            self._server, state, message, name=run.name, running=max(still_running, 0),
            run_id=run.id, outcome=status, attempts=attempts,
            endpoint=self._configuration.endpoint_for(run.uri), code=code,
        )
        return {"status": status, "message": message, "attempts": attempts}


def _ended(run: Run, news: Failed | Gone | Stopped) -> tuple[str, str]:
    """The status and message of a run that ends before its outcome."""
    if isinstance(news, Stopped):  # the engine notices the cancel between tokens or attempts, and ends
        return "cancelled", event_text.cancelled(run.name)
    if isinstance(news, Gone):
        return "error", wording.gone(run.name, news.reason)
    return "error", wording.loop_stopped(news.reason)


async def _measured(
    codec: PositionCodec, run: Run, started_from: StartRequest, outcome: Any
) -> Measured | None:
    """What the run found of its result's strength (`outcome.strength`), to keep when it leaves something
    open (changes survive, an admitted input raises, another passing body disagrees), with the function as
    the run left it: in the module it produced (the one it started from when it changed nothing)."""
    if outcome.strength is None or not outcome.strength.loose_ends:
        return None
    module = outcome.new_source or started_from.text
    loop = asyncio.get_running_loop()
    document = await loop.run_in_executor(None, parse_text, run.uri, None, module, codec)
    function = document.outline_of(run.qualname)
    if function is None:
        return None
    text = lines_text(document.index, function.first_line, function.end_line)
    loosely = outcome.status == "passed_loosely"
    return Measured(run.qualname, run.name, outcome.strength, text, function.first_line, loosely)
