"""The embedded model as a local OpenAI-compatible endpoint: the user's one shared model server.

`start_local_endpoint` installs the model if needed and finds the server every pycapsule process of
this user shares (CLI runs, each editor window's language server, bench workers), starting it if none
runs (shared.py; docs/model.md). The server outlives the process that started it and stops itself
after `model_idle_timeout` without a request; `close()` only lets go of it.
The programmer agent talks to `base_url` through the `openai` client like any other endpoint; the
server's gate lets only this user's connections through, so no key is needed (gate.py).
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from pycapsule.embedded_model import runtime
from pycapsule.embedded_model.catalog import ModelSpec, spec_for
from pycapsule.embedded_model.install import install
from pycapsule.embedded_model.own_file import own_spec
from pycapsule.embedded_model.shared import death_sentence, find_or_start

Progress = Callable[[str], None]


class LocalEndpoint:
    """The shared local model server: `base_url`, `model`, `threads`, `close()`; also a context manager."""

    def __init__(self, spec: ModelSpec, path: Path, on_progress: Progress | None = None,
                 idle_timeout: float | None = None) -> None:
        self.spec = spec
        self.path = path
        report = on_progress or (lambda _line: None)
        self.folder = runtime.runtime_dir()
        found = find_or_start(spec.alias, path, report, idle_timeout, self.folder)
        self.state = found.state
        self.base_url = found.state.base_url
        self.model = found.state.alias
        self.threads = found.state.threads
        """The model's CPU threads, chosen when the server started (greedy answers can differ between
        counts)."""
        self.started_here = found.started_here
        self._closed = False
        plural = "s" if self.threads != 1 else ""
        if found.started_here:
            report(f"local model ready at {self.base_url} in {found.seconds:.1f} s "
                   f"(shared, {self.threads} thread{plural})")
        else:
            report(f"local model ready at {self.base_url} "
                   f"(shared, already running, {self.threads} thread{plural})")
        if found.gpu_note:
            report(found.gpu_note)

    @property
    def pid(self) -> int:
        return self.state.pid

    @property
    def alive(self) -> bool:
        """The server still runs (and this endpoint is not closed). A running server also hears from us:
        a connection counts as use, so it will not stop for idleness just before the request that follows."""
        if self._closed or not runtime.process_alive(self.state.pid, self.state.start_ticks):
            return False
        address = urlsplit(self.base_url)
        with contextlib.suppress(OSError), socket.create_connection((address.hostname, address.port), 1):
            pass
        return True

    def error(self, grace: float = 0.0) -> str | None:
        """None while the server runs; otherwise one sentence saying how it stopped.

        A client sees a killed server's connection drop a moment before its process is gone, so a caller
        that just lost a request passes `grace`: seconds to wait for a dying server.
        """
        if self._closed:
            return "the local model server was closed."
        deadline = time.monotonic() + grace
        while runtime.process_alive(self.state.pid, self.state.start_ticks):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        live = runtime.read_json(runtime.live_file(self.folder, self.model))
        if live.get("pid") == self.state.pid and live.get("stopping"):
            return f"the shared local model server {live['stopping']}."
        return death_sentence(runtime.log_file(self.folder, self.model), self.state.pid)

    def close(self) -> None:
        """Let go of the server; it keeps serving this user's other processes (and stops when idle)."""
        self._closed = True

    def __enter__(self) -> LocalEndpoint:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self.alive else "stopped"
        return f"LocalEndpoint({self.model!r}, {self.base_url!r}, {state})"


def start_local_endpoint(size: str | None = None, on_progress: Progress | None = None,
                         idle_timeout: float | None = None, own_file: str | None = None) -> LocalEndpoint:
    """Install the model if missing, find or start the user's shared server, return once it answers.

    `size=None` means $PYCAPSULE_EMBEDDED_MODEL_SIZE or "1.5b"; `own_file`, the `embedded_model_file` setting:
    the user's own GGUF file, run instead (nothing installed); `idle_timeout=None`, the `model_idle_timeout`
    setting (read when a server starts). Raises ModelInstallError / ModelServerError.
    """
    if own_file is not None:
        spec = own_spec(own_file)
        report = on_progress or (lambda _line: None)
        report(f"using your own model file {own_file} (embedded_model_file: not downloaded, not pinned)")
        return LocalEndpoint(spec, Path(own_file), on_progress, idle_timeout)
    spec = spec_for(size)
    path = install(spec, on_progress=on_progress)
    return LocalEndpoint(spec, path, on_progress, idle_timeout)
