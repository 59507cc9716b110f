"""The language server's side of the engine's process: generation runs happen in a child process
(`engine_host`), so that nothing module-sized (parsing a 20,000-line module, building its capsule and
context, splicing and checking candidates) holds the server's interpreter while it answers hovers and
code actions. A thread of this process would: `ast.parse` of a big module holds the GIL for its whole
duration (hundreds of milliseconds at 20,000 lines).

`EngineProcess` owns that child (started on the first run, started again after it dies, stopped at
shutdown) and the runs it carries. A run is `start`ed with the document's text as the command saw it;
the host parses it and answers with the function's capsule or a refusal (`Refusal`); the server then
lets it `go` (or `drop`s it: the function is busy) and reads its events from `RemoteRun.events` in a
thread of its own. Both ends are this package run by the same user, so the socket pair between them
carries pickles (`multiprocessing.connection` framing).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from pycapsule.capsule import Capsule
from pycapsule.config import Settings

Mode = Literal["generate", "fix", "read_ahead"]
"""A run's kind; "read_ahead" reads a stub's first request into the model's cache (lsp/read_ahead.py)."""


@dataclass(frozen=True)
class StartRequest:
    """What the host needs to start a run: the document as the command saw it and the target in it."""

    uri: str
    path: Path | None
    text: str
    qualname: str | None
    """The target by name, or (None) by `line`."""
    line: int | None
    """0-based line inside the target function."""
    mode: Mode
    settings: Settings
    project_anchor: Path | None
    """Where the project's root is looked up from (`Configuration.project_anchor`): the host walks up,
    so the server's request path touches no file system."""


@dataclass(frozen=True)
class Refusal:
    """No run: `kind` "syntax" (the file does not parse) or "target" (no such function; it has a body)."""

    kind: Literal["syntax", "target"]
    message: str


class EngineGone(RuntimeError):
    """The engine's process stopped (killed, crashed) while a run used it."""


_GONE = "the engine's process stopped"
_DONE = object()


class RemoteRun:
    """One run in the host: first resolved (`resolved`), then let `go` or `drop`ped; `events` yields
    the engine's events (an exception if the host fails) and ends after the last."""

    def __init__(self, process: EngineProcess, run_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.id = run_id
        self._process = process
        self._loop = loop
        self.resolved: asyncio.Future[Capsule | Refusal] = loop.create_future()
        self._events: queue.Queue[Any] = queue.Queue()
        self._child: subprocess.Popen[bytes] | None = None
        """The host that has the run, once it was sent."""

    def go(self) -> None:
        self._process.send(("go", self.id))

    def drop(self) -> None:
        self._process.send(("drop", self.id))

    def cancel(self) -> None:
        self._process.send(("cancel", self.id))

    def events(self) -> Iterator[Any]:
        """Blocks between events: call it from a worker thread."""
        while (item := self._events.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item

    # called by the reader thread
    def _resolve(self, answer: Capsule | Refusal | BaseException) -> None:
        def settle() -> None:
            if self.resolved.done():
                return
            if isinstance(answer, BaseException):
                self.resolved.set_exception(answer)
            else:
                self.resolved.set_result(answer)

        self._loop.call_soon_threadsafe(settle)

    def _event(self, item: Any) -> None:
        self._events.put(item)

    def _end(self, error: BaseException | None = None) -> None:
        if error is not None:
            self._resolve(error)
            self._events.put(error)
        self._events.put(_DONE)


class EngineProcess:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._connection: Connection | None = None
        self._runs: dict[str, RemoteRun] = {}
        self._numbers = itertools.count(1)
        # One sender keeps messages in order and off the event loop (a start carries the whole text).
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-engine-send")

    async def start(self, request: StartRequest) -> RemoteRun:
        """Hand the run to the host (starting it if needed); await `RemoteRun.resolved` for its answer."""
        loop = asyncio.get_running_loop()
        run_id = f"{os.getpid()}-r{next(self._numbers)}"
        run = RemoteRun(self, run_id, loop)
        with self._lock:
            self._runs[run_id] = run
        await loop.run_in_executor(self._sender, self._send_start, run, request)
        return run

    def send(self, message: tuple[Any, ...]) -> None:
        self._sender.submit(self._send_quietly, message)

    def close(self, wait: float = 0.0) -> None:
        """Stop the host, giving it up to `wait` seconds to close its engines (sandboxes, models)."""
        with self._lock:
            child, connection = self._child, self._connection
            self._child = self._connection = None
        self._sender.shutdown(wait=False, cancel_futures=True)
        if child is None or connection is None:
            return
        with contextlib.suppress(OSError):
            connection.send(("close",))
        try:
            child.wait(timeout=max(wait, 0.1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        connection.close()

    # ---- the sender thread ---------------------------------------------------------------------

    def _send_start(self, run: RemoteRun, request: StartRequest) -> None:
        try:
            child, connection = self._ensure_started()
            run._child = child
            connection.send(("start", run.id, request))
        except OSError as error:
            self._forget(run.id)
            run._end(EngineGone(f"{_GONE}: {error}"))

    def _send_quietly(self, message: tuple[Any, ...]) -> None:
        connection = self._connection
        if connection is None:
            return
        with contextlib.suppress(OSError):  # the reader notices the host is gone and ends its runs
            connection.send(message)

    def _ensure_started(self) -> tuple[subprocess.Popen[bytes], Connection]:
        with self._lock:
            if self._connection is not None and self._child is not None and self._child.poll() is None:
                return self._child, self._connection
            ours, theirs = socket.socketpair()
            try:
                child = subprocess.Popen(
                    [sys.executable, "-m", "pycapsule.lsp.engine_host", str(theirs.fileno())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,  # stdout is the editor's channel: none of the host's
                    pass_fds=(theirs.fileno(),),
                )
            finally:
                theirs.close()
            connection = Connection(ours.detach())
            self._child, self._connection = child, connection
        threading.Thread(target=self._read, args=(child, connection), name="pycapsule-engine-read",
                         daemon=True).start()
        return child, connection

    # ---- the reader thread ---------------------------------------------------------------------

    def _read(self, child: subprocess.Popen[bytes], connection: Connection) -> None:
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                break
            kind, run_id = message[0], message[1]
            run = self._runs.get(run_id)
            if run is None:
                continue
            if kind == "resolved":
                run._resolve(message[2])
            elif kind == "event":
                run._event(message[2])
            elif kind == "done":
                self._forget(run_id)
                run._end()
            elif kind == "failed":
                self._forget(run_id)
                run._end(RuntimeError(message[2]))
        with self._lock:
            if self._child is child:
                self._child = self._connection = None
            orphans = [run for run in self._runs.values() if run._child is child]
            for run in orphans:
                del self._runs[run.id]
        child.wait()
        for run in orphans:
            run._end(EngineGone(_GONE))

    def _forget(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
