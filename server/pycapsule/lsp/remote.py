"""What the language server holds of the work it handed to the engine's process (`engine_process`): a run
(`RemoteRun`) or a doctest check (`RemoteCheck`). Each is told what the host sends about it by the reader
thread of `EngineProcess`, which hands it straight to the event loop, and ends with the host's "done" or
"failed", or when the host dies (`EngineGone`). A run's news are typed (`News`: `Resolved`, `Event`, `Done`,
`Failed`, `Gone`, `Stopped`) and awaited in order (`RemoteRun.next`); a check's answers settle futures.
The messages are `host_messages`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pycapsule.capsule import Capsule
from pycapsule.lsp.host_messages import CheckOutcome, CheckPlan, Refusal

Send = Callable[[tuple[Any, ...]], None]
_T = TypeVar("_T")


class EngineGone(RuntimeError):
    """The engine's process stopped (killed, crashed) while a run or a check used it."""


class Remote:
    def __init__(self, send: Send, remote_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.id = remote_id
        self._send = send
        self._loop = loop
        self.child: subprocess.Popen[bytes] | None = None
        """The host that has it, once it was sent."""

    def cancel(self) -> None:
        self._send(("cancel", self.id))

    def _settle(self, future: asyncio.Future[_T], answer: _T | BaseException) -> None:
        """From the reader thread: `future` given `answer` (an exception: raised by it), unless it has one."""

        def settle() -> None:
            if future.done():
                return
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)

        with contextlib.suppress(RuntimeError):  # the event loop is closed: the server is exiting
            self._loop.call_soon_threadsafe(settle)

    # called by the reader thread
    def receive(self, kind: str, payload: Any) -> None:
        raise NotImplementedError

    def end(self, error: BaseException | None = None) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Resolved:
    """The host's answer to the start: the target's capsule, or why nothing can run."""

    answer: Capsule | Refusal


@dataclass(frozen=True)
class Event:
    """One of the engine's events (`pycapsule.events`)."""

    event: Any


@dataclass(frozen=True)
class Done:
    """The host is done with the run: after its last event, or after a refusal, a drop or a cancel."""


@dataclass(frozen=True)
class Failed:
    """The host's run raised (the engine broke its promise of events)."""

    reason: str


@dataclass(frozen=True)
class Gone:
    """The engine's process stopped (killed, crashed) or could not be reached: the run is lost."""

    reason: str


@dataclass(frozen=True)
class Stopped:
    """The server cancelled the run: whoever waits for its news stops waiting at once."""


News = Resolved | Event | Done | Failed | Gone | Stopped
"""What a run's driver on the event loop is told, in the order it happened."""


class RemoteRun(Remote):
    """One run in the host: first `Resolved`, then let `go` (possibly before that) or `drop`ped; then the
    engine's `Event`s and one end (`Done`, `Failed`, `Gone`). The reader thread hands each straight to the
    event loop: `next` awaits them there, one at a time, with no thread of their own."""

    def __init__(self, send: Send, run_id: str, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(send, run_id, loop)
        self._news: asyncio.Queue[News] = asyncio.Queue()

    def go(self) -> None:
        self._send(("go", self.id))

    def drop(self) -> None:
        self._send(("drop", self.id))

    def cancel(self) -> None:
        """On the event loop: the host stops the run, and `next` answers `Stopped` after what came before."""
        super().cancel()
        self._news.put_nowait(Stopped())

    async def next(self) -> News:
        return await self._news.get()

    def receive(self, kind: str, payload: Any) -> None:
        if kind == "resolved":
            self._post(Resolved(payload))
        elif kind == "event":
            self._post(Event(payload))

    def end(self, error: BaseException | None = None) -> None:
        if error is None:
            self._post(Done())
        else:
            self._post(Gone(str(error)) if isinstance(error, EngineGone) else Failed(str(error)))

    def _post(self, news: News) -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is closed: the server is exiting
            self._loop.call_soon_threadsafe(self._news.put_nowait, news)


class RemoteCheck(Remote):
    """One doctest check in the host: first `planned`, then let `go` for the functions to run (their
    outcome in `checked`) or `drop`ped; `checked` is None when nothing ran (dropped, cancelled)."""

    def __init__(self, send: Send, check_id: str, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(send, check_id, loop)
        self.planned: asyncio.Future[CheckPlan] = loop.create_future()
        self.checked: asyncio.Future[CheckOutcome | None] = loop.create_future()
        self._decided = False

    def go(self, qualnames: tuple[str, ...]) -> None:
        self._decided = True
        self._send(("go", self.id, qualnames))

    def drop(self) -> None:
        """Nothing (more) to run; does nothing once it was let go or dropped. The host's check waits for
        one of the two, and checks queue behind it: whoever awaits `planned` drops it in a `finally`."""
        if not self._decided:
            self._decided = True
            self._send(("drop", self.id))

    def receive(self, kind: str, payload: Any) -> None:
        if kind == "planned":
            self._settle(self.planned, payload)
        elif kind == "checked":
            self._settle(self.checked, payload)

    def end(self, error: BaseException | None = None) -> None:
        self._settle(self.planned, error or EngineGone("the engine's process ended the check unplanned"))
        self._settle(self.checked, error)
