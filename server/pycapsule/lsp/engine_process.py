"""The language server's side of the engine's process: generation runs and doctest checks happen in a
child process (`engine_host`), so that nothing module-sized (parsing a 20,000-line module, building its
capsules, context and content keys, splicing and checking candidates) holds the server's interpreter while it
answers hovers and code actions. A thread of this process would: `ast.parse` of a big module holds the GIL
for its whole duration (hundreds of milliseconds at 20,000 lines).

`EngineProcess` owns that child (started on the first run or check, started again after it dies, stopped at
shutdown) and the work it carries (`remote`: `RemoteRun`, `RemoteCheck`). A run is `start`ed with the
document's text as the command saw it, a check (`check`) with the text as it was saved; the host answers
and the server decides what happens next (`host_messages` has the exchange). One thread sends, in order and
off the event loop; one reads the host's answers and hands them straight to the event loop. Both ends are this
package run by the same user, so the socket pair between them carries pickles (`multiprocessing.connection`
framing).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from pycapsule.lsp import wording
from pycapsule.lsp.host_messages import CheckRequest, StartRequest
from pycapsule.lsp.remote import EngineGone, Remote, RemoteCheck, RemoteRun


class EngineProcess:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._connection: Connection | None = None
        self._remotes: dict[str, Remote] = {}
        self._numbers = itertools.count(1)
        # One sender keeps messages in order and off the event loop (a start carries the whole text).
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-engine-send")

    def start(self, request: StartRequest) -> RemoteRun:
        """Hand the run to the host (starting it if needed), without waiting for either: its answer and events
        come from `RemoteRun.next` (`Gone` when it cannot be sent)."""
        run = RemoteRun(self.send, f"{os.getpid()}-r{next(self._numbers)}", asyncio.get_running_loop())
        self._hand_over(run, ("start", run.id, request))
        return run

    def check(self, request: CheckRequest) -> RemoteCheck:
        """Hand the doctest check to the host (starting it if needed); await `RemoteCheck.planned` for its
        plan, then let it go or drop it."""
        check = RemoteCheck(self.send, f"{os.getpid()}-c{next(self._numbers)}", asyncio.get_running_loop())
        self._hand_over(check, ("check", check.id, request))
        return check

    def _hand_over(self, remote: Remote, message: tuple[Any, ...]) -> None:
        with self._lock:
            self._remotes[remote.id] = remote
        try:
            self._sender.submit(self._send_first, remote, message)
        except RuntimeError:  # the sender was shut down: the server is closing
            self._forget(remote.id)
            remote.end(EngineGone(wording.engine_gone()))

    def send(self, message: tuple[Any, ...]) -> None:
        # RuntimeError: the sender was shut down (the server is closing): the host is being stopped anyway
        with contextlib.suppress(RuntimeError):
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

    def _send_first(self, remote: Remote, message: tuple[Any, ...]) -> None:
        try:
            child, connection = self._ensure_started()
            remote.child = child
            connection.send(message)
        except OSError as error:
            self._forget(remote.id)
            remote.end(EngineGone(wording.engine_gone(error)))

    def _send_quietly(self, message: tuple[Any, ...]) -> None:
        connection = self._connection
        if connection is None:
            return
        with contextlib.suppress(OSError):  # the reader notices the host is gone and ends its work
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
            kind, remote_id = message[0], message[1]
            remote = self._remotes.get(remote_id)
            if remote is None:
                continue
            if kind == "done":
                self._forget(remote_id)
                remote.end()
            elif kind == "failed":
                self._forget(remote_id)
                remote.end(RuntimeError(message[2]))
            else:
                remote.receive(kind, message[2])
        with self._lock:
            if self._child is child:
                self._child = self._connection = None
            orphans = [remote for remote in self._remotes.values() if remote.child is child]
            for remote in orphans:
                del self._remotes[remote.id]
        child.wait()
        for remote in orphans:
            remote.end(EngineGone(wording.engine_gone()))

    def _forget(self, remote_id: str) -> None:
        with self._lock:
            self._remotes.pop(remote_id, None)
