"""Generation runs in the background: the engine's synchronous loop in a thread, its events turned
into progress, status notifications and, at the end, one versioned edit.

One run per function at a time. A run stops when the user cancels it from the progress UI
(`window/workDoneProgress/cancel`), by `$/cancelRequest` on the `workspace/executeCommand`
request that started it, or through the `pycapsule.cancel` command; the engine checks the
`cancel` event between streamed tokens and between attempts.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types

from pycapsule.capsule import Capsule
from pycapsule.lsp.apply import apply_outcome
from pycapsule.lsp.documents import ParsedDocument
from pycapsule.lsp.progress import RunProgress
from pycapsule.lsp.status import log, send_status, show

if TYPE_CHECKING:
    from pycapsule.lsp.server import PycapsuleServer

Mode = Literal["generate", "fix"]
_STREAM_REPORT_SECONDS = 0.5
"""While the model streams, the progress says how much has come at most this often."""


_STOP = object()
"""Put on a run's queue when the user cancels, so the run ends even if the engine is stuck in a call."""


@dataclass
class Run:
    uri: str
    qualname: str
    name: str
    cancel: threading.Event = field(default_factory=threading.Event)
    request_id: Any = None
    progress_token: str | None = None
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)

    def stop(self) -> None:
        """Called on the event loop: tells the engine's thread and the run's driver."""
        if not self.cancel.is_set():
            self.cancel.set()
            self.queue.put_nowait(_STOP)


def _pump(events: Iterator[Any], deliver: Callable[[Any], None]) -> None:
    """Runs in a worker thread: every event of the engine's loop is handed to the event loop."""
    try:
        for event in events:
            deliver(event)
    except Exception as exc:  # the engine promises events, not exceptions; keep the editor informed anyway
        deliver(exc)
    finally:
        deliver(None)


def describe(event: Any) -> tuple[int, str] | None:
    """(attempt, what is happening) for the progress UI; None for events not worth a line."""
    from pycapsule.loop import AttemptFinished, AttemptStarted, ModelRetrying, Notice

    if isinstance(event, AttemptStarted):
        doing = {"generate": "generating", "fix": "fixing", "restart": "starting over"}
        return event.attempt, doing.get(event.mode, "checking the current body")
    if isinstance(event, AttemptFinished):
        return event.attempt, "doctests passed" if event.passed else event.headline or event.verdict
    if isinstance(event, ModelRetrying):
        return event.attempt, f"model call failed ({event.reason}); retrying in {event.delay:.0f} s"
    if isinstance(event, Notice):
        return 0, event.message
    return None


class Runs:
    def __init__(self, server: PycapsuleServer) -> None:
        self._server = server
        self._runs: dict[tuple[str, str], Run] = {}
        self._threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="pycapsule-run")

    @property
    def count(self) -> int:
        return len(self._runs)

    def running(self, uri: str, qualname: str) -> bool:
        return (uri, qualname) in self._runs

    def cancel(self, uri: str | None = None, qualname: str | None = None) -> int:
        """Cancel the runs that match (all of them when nothing is given); returns how many."""
        matched = [
            run
            for run in self._runs.values()
            if (uri is None or run.uri == uri) and (qualname is None or run.qualname == qualname)
        ]
        for run in matched:
            run.stop()
        return len(matched)

    def cancel_progress(self, token: types.ProgressToken) -> None:
        for run in self._runs.values():
            if run.progress_token == token:
                run.stop()

    def cancel_request(self, request_id: Any) -> None:
        for run in self._runs.values():
            if run.request_id is not None and run.request_id == request_id:
                run.stop()

    def shutdown(self) -> None:
        self.cancel()
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def run(
        self, document: ParsedDocument, capsule: Capsule, mode: Mode, request_id: Any = None
    ) -> dict[str, Any]:
        """Run the loop for one function to its end; the result is what `workspace/executeCommand` returns."""
        key = (document.uri, capsule.qualname)
        if key in self._runs:
            message = f"`{capsule.name}` is already being generated; cancel that run first."
            show(self._server, message, types.MessageType.Warning)
            return {"status": "busy", "message": message}
        run = Run(document.uri, capsule.qualname, capsule.name, request_id=request_id)
        self._runs[key] = run
        progress = RunProgress(self._server)
        try:
            verb = "Generating" if mode == "generate" else "Self-debugging"
            await progress.begin(f"{verb} `{capsule.name}`", "starting")
            run.progress_token = progress.token
            self._status("generating", f"{verb} `{capsule.name}`", run)
            return await self._drive(run, document, capsule, mode, progress)
        finally:
            self._runs.pop(key, None)

    async def _drive(
        self, run: Run, document: ParsedDocument, capsule: Capsule, mode: Mode, progress: RunProgress
    ) -> dict[str, Any]:
        # Imported on first use: the loop pulls in the openai client, seconds of start-up on a busy machine.
        from pycapsule.loop import AttemptFinished, AttemptStarted, Finished, TokensStreamed

        loop = asyncio.get_running_loop()

        def deliver(item: Any) -> None:
            loop.call_soon_threadsafe(run.queue.put_nowait, item)

        try:
            engine = await self._server.engine()
        except Exception as exc:
            return self._finish(run, progress, "error", f"cannot start the engine: {exc}")
        if run.cancel.is_set():
            return self._finish(run, progress, "cancelled", "cancelled")
        events = engine.generate(capsule, cancel=run.cancel, from_current_body=(mode == "fix"))
        loop.run_in_executor(self._threads, _pump, events, deliver)
        outcome, max_attempts, streamed, reported = None, 0, 0, 0.0
        doing: tuple[int, str] | None = None
        while (item := await run.queue.get()) is not None:
            if item is _STOP:
                # The engine's thread notices the event between tokens or attempts and ends on its own.
                return self._finish(run, progress, "cancelled", f"`{run.name}`: cancelled")
            if isinstance(item, Exception):
                return self._finish(run, progress, "error", f"the loop stopped: {item}")
            if isinstance(item, Finished):
                outcome = item.outcome
                continue
            if isinstance(item, AttemptStarted):
                max_attempts, streamed, doing = item.max_attempts, 0, describe(item)
            if isinstance(item, TokensStreamed) and doing is not None:
                streamed += len(item.text)
                if time.monotonic() - reported >= _STREAM_REPORT_SECONDS:
                    reported = time.monotonic()
                    self._report(run, progress, doing[0], max_attempts, f"{doing[1]}: {streamed} characters")
                continue
            said = describe(item)
            if said is not None:
                attempt, text = said
                reported = time.monotonic()
                self._report(run, progress, attempt, max_attempts, text)
                if isinstance(item, AttemptFinished):
                    log(self._server, f"`{run.name}` attempt {attempt}: {text} ({item.seconds:.1f} s)")
        if outcome is None:
            return self._finish(run, progress, "error", "the loop ended without an outcome")
        return await self._conclude(run, document, capsule, outcome, progress)

    async def _conclude(
        self, run: Run, document: ParsedDocument, capsule: Capsule, outcome: Any, progress: RunProgress
    ) -> dict[str, Any]:
        attempts = outcome.attempts
        if outcome.status == "passed" and not outcome.edits:
            message = f"`{run.name}` already passes its doctests"
            return self._finish(run, progress, "passed", message, attempts)
        if outcome.status in ("passed", "not_verified") and outcome.edits:
            applied, message = await apply_outcome(self._server, document, capsule, outcome.edits)
            if not applied:
                show(self._server, message, types.MessageType.Warning)
                return self._finish(run, progress, "refused", message, attempts)
            if outcome.status == "passed":
                summary = f"`{run.name}` passes its doctests (attempt {attempts})"
            else:
                summary = f"`{run.name}` filled but not verified: {outcome.message}"
            return self._finish(run, progress, outcome.status, summary, attempts)
        if outcome.status == "gave_up":
            message = f"gave up on `{run.name}` after {attempts} attempts: {outcome.message}"
            show(self._server, message, types.MessageType.Warning)
            return self._finish(run, progress, "gave_up", message, attempts)
        if outcome.status == "cancelled":
            return self._finish(run, progress, "cancelled", f"`{run.name}`: cancelled", attempts)
        message = f"`{run.name}`: {outcome.message}"
        show(self._server, message, types.MessageType.Error)
        return self._finish(run, progress, outcome.status, message, attempts)

    def _report(self, run: Run, progress: RunProgress, attempt: int, max_attempts: int, what: str) -> None:
        total = max(max_attempts, attempt, 1)
        if attempt == 0:
            progress.report(what, 0)
        else:
            progress.report(f"attempt {attempt}/{total}: {what}", int(100 * (attempt - 1) / total))
        self._status("generating", what, run, attempt=attempt, max_attempts=total)

    def _status(self, state: str, message: str, run: Run, **counts: int | None) -> None:
        send_status(self._server, state, message, name=run.name, running=self.count, **counts)  # type: ignore[arg-type]

    def _finish(
        self, run: Run, progress: RunProgress, status: str, message: str, attempts: int = 0
    ) -> dict[str, Any]:
        progress.end(message)
        still_running = self.count - 1
        if status == "error":
            self._status("error", message, run)
        elif still_running == 0:
            send_status(self._server, "idle", message, name=run.name, running=0)
        if still_running == 0:
            self._server.close_retired_engines()
        log(self._server, message)
        return {"status": status, "message": message, "attempts": attempts}
