"""A transport to a worker running as a local process (the bwrap and unsafe-subprocess backends)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence

from pycapsule.sandbox.protocol import Transport, WorkerGone, WorkerTimeout

STDERR_TAIL = 4000


class ProcessTransport(Transport):
    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        cwd: str | None = None,
        pass_fds: Sequence[int] = (),
        on_kill: Callable[[], None] | None = None,
        oom_kills: Callable[[], int | None] | None = None,
    ):
        self._on_kill = on_kill
        self._oom_kills = oom_kills
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the process)
        try:
            self.process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=cwd,
                pass_fds=tuple(pass_fds),
                start_new_session=True,
            )
        except OSError:
            self._stderr.close()
            raise
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._in, view) :]
        except (BrokenPipeError, OSError) as error:
            raise WorkerGone(str(error)) from error

    def receive(self, deadline: float) -> bytes:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout()
            ready, _, _ = select.select([self._out], [], [], remaining)
            if ready:
                try:
                    return os.read(self._out, 1 << 20)
                except OSError as error:
                    raise WorkerGone(str(error)) from error

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        if self._on_kill is not None:
            self._on_kill()
            self._on_kill = None

    def oom_kills(self) -> int | None:
        return self._oom_kills() if self._oom_kills is not None else None

    def diagnostics(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stderr.close()
