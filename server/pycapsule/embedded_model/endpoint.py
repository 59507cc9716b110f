"""Start the embedded model as a local OpenAI-compatible endpoint, in a child process we own.

The child (`python -m pycapsule.embedded_model.serve`) never outlives us: it exits when its stdin (a pipe
only we hold) closes or its parent changes, and `close()` / interpreter exit stop it explicitly.
The programmer agent talks to `base_url` through the `openai` client like any other endpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO

from pycapsule.embedded_model.catalog import ModelSpec, spec_for
from pycapsule.embedded_model.environment import without_secrets
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.embedded_model.install import install
from pycapsule.embedded_model.serve import CONTEXT_SIZE, default_threads

Progress = Callable[[str], None]

START_TIMEOUT = 180.0
_STOP_GRACE = 5.0


class LocalEndpoint:
    """A running local model server: `base_url`, `model`, `close()`; also a context manager."""

    def __init__(self, spec: ModelSpec, path: Path, on_progress: Progress | None = None) -> None:
        self.spec = spec
        self.path = path
        self.base_url = ""
        self.model = spec.alias
        self.threads = 0
        """The model's CPU threads, chosen when it starts: greedy answers can differ between counts."""
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._launch(on_progress or (lambda _line: None))

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def error(self, grace: float = 0.0) -> str | None:
        """None while the server runs; otherwise one sentence saying how it stopped.

        A client sees a killed server's connection drop a moment before the kernel reports its exit,
        so a caller that just lost a request passes `grace`: seconds to wait for a dying server.
        """
        if self._process is None:
            return "the local model server was closed."
        try:
            status = self._process.wait(timeout=grace) if grace > 0 else self._process.poll()
        except subprocess.TimeoutExpired:
            status = None
        if status is None:
            return None
        return _death_sentence(status, self._log)

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._process = None
        self._log = None

    def __enter__(self) -> LocalEndpoint:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.alive else "stopped"
        return f"LocalEndpoint({self.model!r}, {self.base_url!r}, {state})"

    def _launch(self, report: Progress) -> None:
        report(f"starting the local model {self.spec.alias} ({self.path.name})")
        started = time.monotonic()
        # Kept open for the child's lifetime (it is the child's stderr), closed by _stop.
        log = tempfile.TemporaryFile(prefix="pycapsule-model-", suffix=".log")  # noqa: SIM115
        self.threads = default_threads()
        command = [
            sys.executable, "-m", "pycapsule.embedded_model.serve",
            "--model", str(self.path), "--alias", self.spec.alias, "--port", "0",
            "--threads", str(self.threads), "--ctx", str(CONTEXT_SIZE), "--watch-parent",
        ]
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=_child_env(),
            )
        except OSError as error:
            log.close()
            reason = error.strerror or error
            raise ModelServerError(f"could not start the local model server: {reason}.") from None
        self._process, self._log = process, log
        self._finalizer = weakref.finalize(self, _stop, process, log)
        try:
            ready = _read_ready_line(process, log, START_TIMEOUT)
            self.base_url, self.model = ready["base_url"], ready["model"]
            _wait_healthy(self.base_url, process, log, deadline=time.monotonic() + 30)
        except BaseException:
            self.close()
            raise
        report(f"local model ready at {self.base_url} in {time.monotonic() - started:.1f} s "
               f"({self.threads} thread{'s' if self.threads != 1 else ''})")


def start_local_endpoint(size: str | None = None, on_progress: Progress | None = None) -> LocalEndpoint:
    """Install the model if missing, start its server on a free 127.0.0.1 port, return once it answers.

    `size=None` means $PYCAPSULE_MODEL_SIZE or "1.5b". Raises ModelInstallError / ModelServerError.
    """
    spec = spec_for(size)
    path = install(spec, on_progress=on_progress)
    return LocalEndpoint(spec, path, on_progress)


def _child_env() -> dict[str, str]:
    env = without_secrets()
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _read_ready_line(process: subprocess.Popen[bytes], log: IO[bytes], timeout: float) -> dict[str, str]:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=0.2):
                line = process.stdout.readline()
                if not line:  # the child closed stdout: it is exiting
                    process.wait(timeout=_STOP_GRACE)
                    raise ModelServerError(_death_sentence(process.returncode, log))
                try:
                    message = json.loads(line)
                except ValueError:
                    continue  # not ours (a library printing to stdout); keep waiting
                if "error" in message:
                    detail = _first_error_line(log)  # llama.cpp's own reason, from the child's stderr
                    sentence = str(message["error"]).rstrip(".")
                    raise ModelServerError(f"{sentence}: {detail}." if detail else f"{sentence}.")
                if "base_url" in message and "model" in message:
                    return message
            elif process.poll() is not None:
                raise ModelServerError(_death_sentence(process.returncode, log))
    raise ModelServerError(f"the local model server did not become ready within {timeout:.0f} s.")


def _wait_healthy(base_url: str, process: subprocess.Popen[bytes], log: IO[bytes], deadline: float) -> None:
    health = base_url.removesuffix("/v1") + "/health"
    while True:
        try:
            with urllib.request.urlopen(health, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if process.poll() is not None:
            raise ModelServerError(_death_sentence(process.returncode, log))
        if time.monotonic() > deadline:
            raise ModelServerError(f"the local model server at {base_url} does not answer its health check.")
        time.sleep(0.1)


def _death_sentence(status: int, log: IO[bytes] | None) -> str:
    if status < 0:
        try:
            how = f"killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"killed by signal {-status}"
    else:
        how = f"exit status {status}"
    reason = _first_error_line(log)
    return f"the local model server stopped unexpectedly ({how})" + (f": {reason}" if reason else ".")


def _first_error_line(log: IO[bytes] | None) -> str:
    """The root cause llama.cpp logged: the first error line of the log's tail.

    Lines look like '0.00.012.776 E gguf_init_from_reader: bad GGUF version: 0'; the later ones
    only repeat the consequences ('failed to load model', 'exiting due to model loading error').
    """
    if log is None or log.closed:
        return ""
    try:
        log.seek(0, os.SEEK_END)
        size = log.tell()
        log.seek(max(0, size - 16384))
        tail = log.read().decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return ""
    for line in tail:
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[1] == "E":
            return " ".join(fields[2].split())
    return ""


def _stop(process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Stop the child: close its stdin (it exits by itself), then SIGTERM, then SIGKILL; always reap it."""
    try:
        if process.poll() is None:
            with contextlib.suppress(OSError):
                if process.stdin:
                    process.stdin.close()
            try:
                process.wait(timeout=_STOP_GRACE)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=_STOP_GRACE)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    finally:
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if stream:
                    stream.close()
        with contextlib.suppress(OSError):
            log.close()
