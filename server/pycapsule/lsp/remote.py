"""What the language server holds of the work it handed to the engine's process (`engine_process`): a run
(`RemoteRun`) or a doctest check (`RemoteCheck`). Each is told what the host sends about it by the reader
thread of `EngineProcess`, and ends with the host's "done" or "failed", or when the host dies (`EngineGone`).
The messages are `host_messages`'s.
"""

from __future__ import annotations

import asyncio
import queue
import subprocess
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pycapsule.capsule import Capsule
from pycapsule.lsp.host_messages import CheckOutcome, CheckPlan, Refusal

Send = Callable[[tuple[Any, ...]], None]
_T = TypeVar("_T")
_DONE = object()


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

        self._loop.call_soon_threadsafe(settle)

    # called by the reader thread
    def receive(self, kind: str, payload: Any) -> None:
        raise NotImplementedError

    def end(self, error: BaseException | None = None) -> None:
        raise NotImplementedError


class RemoteRun(Remote):
    """One run in the host: first resolved (`resolved`), then let `go` or `drop`ped; `events` yields
    the engine's events (an exception if the host fails) and ends after the last."""

    def __init__(self, send: Send, run_id: str, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(send, run_id, loop)
        self.resolved: asyncio.Future[Capsule | Refusal] = loop.create_future()
        self._events: queue.Queue[Any] = queue.Queue()

    def go(self) -> None:
        self._send(("go", self.id))

    def drop(self) -> None:
        self._send(("drop", self.id))

    def events(self) -> Iterator[Any]:
        """Blocks between events: call it from a worker thread."""
        while (item := self._events.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item

    def receive(self, kind: str, payload: Any) -> None:
        if kind == "resolved":
            self._settle(self.resolved, payload)
        elif kind == "event":
            self._events.put(payload)

    def end(self, error: BaseException | None = None) -> None:
        self._settle(self.resolved, error or EngineGone("the engine's process ended the run unresolved"))
        if error is not None:
            self._events.put(error)
        self._events.put(_DONE)


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
