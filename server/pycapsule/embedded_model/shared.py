"""Find the user's shared model server, or start it: one model process for every pycapsule process.

Under an exclusive lock in the user's runtime folder (runtime.py), so two processes starting at once
start one server: the state file is read and checked (the process is the one recorded, its model file
is the one wanted and unchanged, a pinned thread count matches, `/health` answers through its gate);
a server that fails a check is stopped and replaced, a missing one started (daemon.py), and the state
written atomically. `stop` and `status` are `pycapsule model stop | status`.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pycapsule.embedded_model import runtime
from pycapsule.embedded_model.environment import without_secrets
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.embedded_model.runtime import ServerState
from pycapsule.embedded_model.serve import CONTEXT_SIZE, GpuOffload, default_threads

Progress = Callable[[str], None]

START_TIMEOUT = 180.0
HEALTH_TIMEOUT = 5.0
HEALTH_PATIENCE = 30.0
STOP_GRACE = 5.0
DEFAULT_IDLE_TIMEOUT = 900.0


@dataclass(frozen=True)
class Found:
    state: ServerState
    started_here: bool
    """This call started the server (else it was running already)."""
    seconds: float
    """How long finding or starting it took."""
    gpu_note: str | None = None
    """Why the `model_gpu_layers` asked for are not offloaded (None: they are, or none were asked)."""


def pinned_threads() -> int | None:
    value = os.environ.get("PYCAPSULE_MODEL_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def find_or_start(alias: str, model_path: Path, report: Progress, idle_timeout: float | None = None,
                  folder: Path | None = None, gpu_layers: int | None = None) -> Found:
    """The running shared server for `model_path`, else a new one; raises ModelServerError.

    `gpu_layers=None`: the `model_gpu_layers` setting of the user's own configuration, like the idle timeout
    (every client of the shared server reads the same, so they never restart it back and forth)."""
    began = time.monotonic()
    if gpu_layers is None:
        gpu_layers = configured_gpu_layers()
    folder = folder or runtime.runtime_dir()
    lock = runtime.lock_file(folder, alias)

    def waiting() -> None:
        report("waiting for another pycapsule process that is starting the shared local model")

    with runtime.exclusive(lock, on_wait=waiting, timeout=START_TIMEOUT + 60) as held:
        if not held:
            raise ModelServerError(f"another pycapsule process has been starting the local model for over "
                                   f"{START_TIMEOUT + 60:.0f} s (lock {lock}); try again, or "
                                   "`pycapsule model stop`.")
        state = runtime.read_state(folder, alias)
        if state is not None:
            problem = unusable(state, model_path, gpu_layers)
            if problem is None:
                return Found(state, False, time.monotonic() - began, gpu_note(state, gpu_layers))
            if runtime.process_alive(state.pid, state.start_ticks):
                report(f"restarting the shared local model (pid {state.pid}): {problem}")
                terminate(state)
            with contextlib.suppress(OSError):
                runtime.state_file(folder, alias).unlink()
        if idle_timeout is None:
            idle_timeout = configured_idle_timeout()
        report(f"starting the local model {alias} ({model_path.name}), shared by your pycapsule processes")
        _remove_stale_sockets(folder)
        state = _launch(folder, alias, model_path, idle_timeout, gpu_layers)
        runtime.write_atomically(runtime.state_file(folder, alias), state.to_json())
        try:
            _wait_healthy(state, folder)
        except ModelServerError:
            terminate(state)
            with contextlib.suppress(OSError):
                runtime.state_file(folder, alias).unlink()
            raise
        return Found(state, True, time.monotonic() - began, gpu_note(state, gpu_layers))


def _remove_stale_sockets(folder: Path) -> None:
    """The sockets of servers that are gone (killed before they could remove theirs)."""
    for path in folder.glob("m-*.sock"):
        pid = path.stem.removeprefix("m-")
        if pid.isdigit() and not runtime.process_alive(int(pid), None):
            with contextlib.suppress(OSError):
                path.unlink()


def _users_setting(key: str, otherwise: float) -> float:
    """A setting from the user's own configuration (file, environment), never a project's; `otherwise` if it
    cannot be read."""
    try:
        from pycapsule.config import load_settings

        return float(getattr(load_settings(None).settings, key))
    except Exception:  # a broken config file must not keep the model from starting
        return otherwise


def configured_idle_timeout() -> float:
    """The `model_idle_timeout` setting."""
    return _users_setting("model_idle_timeout", DEFAULT_IDLE_TIMEOUT)


def configured_gpu_layers() -> int:
    """The `model_gpu_layers` setting (0 if unreadable)."""
    return int(_users_setting("model_gpu_layers", 0))


def gpu_note(state: ServerState, asked: int) -> str | None:
    """One sentence when `asked` layers cannot be offloaded by the running server `state` (None otherwise)."""
    return GpuOffload(asked, state.gpu_layers, state.gpu_device).note()


def unusable(state: ServerState, model_path: Path, gpu_layers: int = 0) -> str | None:
    """Why the recorded server cannot serve `model_path` now, with `gpu_layers` offloaded (None: it can)."""
    if not runtime.process_alive(state.pid, state.start_ticks):
        return "it is no longer running"
    try:
        info = model_path.stat()
    except OSError:
        return f"its model file {model_path} is missing"
    if (state.model_path, state.model_size, state.model_mtime_ns) != (str(model_path), info.st_size,
                                                                       info.st_mtime_ns):
        return "its model file changed"
    pinned = pinned_threads()
    if pinned is not None and pinned != state.threads:
        threads = f"{state.threads} thread{'s' if state.threads != 1 else ''}"
        return f"it runs {threads} and $PYCAPSULE_MODEL_THREADS asks for {pinned}"
    # Where its runtime has no GPU device a restart would change nothing: the CPU runs the model either way.
    if gpu_layers != state.gpu_layers_asked and state.gpu_device:
        return f"it offloads {state.gpu_layers} layers to its GPU and model_gpu_layers asks for {gpu_layers}"
    if not _answers(state, within=HEALTH_PATIENCE):
        return f"it has not answered its health check for {HEALTH_PATIENCE:.0f} s"
    return None


def _answers(state: ServerState, within: float) -> bool:
    """`/health` answers within `within` seconds (a busy machine may be slow: a server is not replaced,
    and its requests lost, for one slow answer)."""
    deadline = time.monotonic() + within
    while not healthy(state.base_url, HEALTH_TIMEOUT):
        if time.monotonic() > deadline or not runtime.process_alive(state.pid, state.start_ticks):
            return False
        time.sleep(0.5)
    return True


def healthy(base_url: str, timeout: float) -> bool:
    health = base_url.removesuffix("/v1") + "/health"
    try:
        with urllib.request.urlopen(health, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _wait_healthy(state: ServerState, folder: Path, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not healthy(state.base_url, HEALTH_TIMEOUT):
        if not runtime.process_alive(state.pid, state.start_ticks):
            raise ModelServerError(death_sentence(runtime.log_file(folder, state.alias), state.pid))
        if time.monotonic() > deadline:
            raise ModelServerError(f"the local model server at {state.base_url} does not answer its health "
                                   "check.")
        time.sleep(0.1)


def terminate(state: ServerState, grace: float = STOP_GRACE) -> bool:
    """SIGTERM the recorded server (only if it is still that process), SIGKILL after `grace`; True once
    it is gone."""
    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        if not runtime.process_alive(state.pid, state.start_ticks):
            return True
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.pid, signum)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not runtime.process_alive(state.pid, state.start_ticks):
                return True
            time.sleep(0.05)
    return not runtime.process_alive(state.pid, state.start_ticks)


def _launch(folder: Path, alias: str, model_path: Path, idle_timeout: float, gpu_layers: int) -> ServerState:
    threads = pinned_threads() or default_threads()
    command = [
        sys.executable, "-m", "pycapsule.embedded_model.daemon", "--model", str(model_path), "--alias", alias,
        "--threads", str(threads), "--ctx", str(CONTEXT_SIZE), "--shared", str(folder),
        "--idle-timeout", f"{idle_timeout:g}", "--gpu-layers", str(gpu_layers), "--detach",
    ]
    log_path = runtime.log_file(folder, alias)
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as log:
        try:
            starter = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=_server_env(),
                cwd="/", start_new_session=True,
            )
        except OSError as error:
            reason = error.strerror or error
            raise ModelServerError(f"could not start the local model server: {reason}.") from None
    assert starter.stdout is not None
    pid: int | None = None
    try:
        with starter.stdout as lines:
            ready, pid = _read_ready(lines, log_path, START_TIMEOUT)
    except BaseException:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
    finally:
        starter.wait()  # the forking parent: it exits as soon as it has forked
    info, pid = model_path.stat(), int(ready["pid"])
    return ServerState(
        pid=pid, start_ticks=runtime.start_ticks(pid), base_url=str(ready["base_url"]),
        alias=str(ready["model"]), model_path=str(model_path), model_size=info.st_size,
        model_mtime_ns=info.st_mtime_ns, threads=int(ready["threads"]), idle_timeout=idle_timeout,
        started=time.time(), gpu_layers_asked=gpu_layers, gpu_layers=int(str(ready.get("gpu_layers", 0))),
        gpu_device=str(ready.get("gpu_device", "")),
    )


def _server_env() -> dict[str, str]:
    env = without_secrets()
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _read_ready(lines: IO[bytes], log_path: Path, timeout: float) -> tuple[dict[str, object], int | None]:
    """The server's JSON lines until its ready line: ({"base_url", "model", "threads", "pid"}, pid)."""
    deadline = time.monotonic() + timeout
    pid: int | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(lines, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=0.2):
                continue
            line = lines.readline()
            if not line:  # the server closed its end: it is exiting
                _wait_gone(pid)
                raise ModelServerError(death_sentence(log_path, pid))
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not ours (a library printing to stdout)
            if not isinstance(message, dict):
                continue
            if "error" in message:
                detail = first_error_line(log_path)  # llama.cpp's own reason
                sentence = str(message["error"]).rstrip(".")
                raise ModelServerError(f"{sentence}: {detail}." if detail else f"{sentence}.")
            if "pid" in message and "base_url" not in message:
                pid = int(message["pid"])
            elif "base_url" in message and pid is not None:
                return {**message, "pid": pid}, pid
    raise ModelServerError(f"the local model server did not become ready within {timeout:.0f} s.")


def _wait_gone(pid: int | None, within: float = STOP_GRACE) -> None:
    deadline = time.monotonic() + within
    while pid is not None and runtime.process_alive(pid, None) and time.monotonic() < deadline:
        time.sleep(0.05)


def death_sentence(log_path: Path, pid: int | None) -> str:
    reason = first_error_line(log_path, pid)
    return "the local model server stopped unexpectedly" + (f": {reason}" if reason else ".")


def first_error_line(log_path: Path, pid: int | None = None) -> str:
    """The root cause llama.cpp logged: the first error line of the log's tail (only the log of server
    `pid`, when given: a later server's log says nothing about this one).

    Lines look like '0.00.012.776 E gguf_init_from_reader: bad GGUF version: 0'; the later ones
    only repeat the consequences ('failed to load model', 'exiting due to model loading error').
    """
    try:
        with open(log_path, "rb") as log:
            head = log.readline().decode("utf-8", "replace")
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 16384))
            tail = log.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    if pid is not None and f" pid {pid}:" not in head:
        return ""
    for line in tail:
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[1] == "E":
            return " ".join(fields[2].split())
    return ""


# ---- `pycapsule model stop | status` -----------------------------------------------------------------


def stop(folder: Path | None = None, alias: str | None = None) -> list[ServerState]:
    """Stop the shared servers (every model's, or `alias`'s); returns those that were running."""
    folder = folder or runtime.runtime_dir()
    stopped = []
    for state in runtime.states(folder):
        if alias is not None and state.alias != alias:
            continue
        with runtime.exclusive(runtime.lock_file(folder, state.alias), timeout=START_TIMEOUT + 60):
            current = runtime.read_state(folder, state.alias)
            if current is None or current.pid != state.pid:
                continue
            if runtime.process_alive(state.pid, state.start_ticks):
                terminate(state)
                stopped.append(state)
            with contextlib.suppress(OSError):
                runtime.state_file(folder, state.alias).unlink()
    return stopped


@dataclass(frozen=True)
class Status:
    state: ServerState
    running: bool
    open_connections: int
    idle_seconds: float | None
    """Seconds since its last connection ended (None: unknown)."""
    speed: Speed | None = None
    """How fast it read and wrote its last requests (None: no request timed yet)."""
    keeps_timings: bool = True
    """False for a server started by an older pycapsule, whose gate keeps no timings."""


@dataclass(frozen=True)
class Speed:
    """llama.cpp's own timings of a server's last `requests` answers (gate.py), summed."""

    requests: int
    read_tokens: int
    read_seconds: float
    written_tokens: int
    written_seconds: float

    @property
    def reads_per_second(self) -> float | None:
        return self.read_tokens / self.read_seconds if self.read_seconds > 0 else None

    @property
    def writes_per_second(self) -> float | None:
        return self.written_tokens / self.written_seconds if self.written_seconds > 0 else None

    def sentence(self) -> str:
        """'writes 11.8 tokens/s, reads 64.0 tokens/s (llama.cpp's timings of its last 12 requests)'."""
        def rate(value: float | None) -> str:
            return "? tokens/s" if value is None else f"{value:.1f} tokens/s"

        plural = "s" if self.requests != 1 else ""
        return (f"writes {rate(self.writes_per_second)}, reads {rate(self.reads_per_second)} "
                f"(llama.cpp's timings of its last {self.requests} request{plural})")


def speed(timings: object) -> Speed | None:
    """The timings a server's live file holds, summed (tokens over seconds: a request of a few tokens weighs
    little); None when there are none."""
    entries = [entry for entry in timings if isinstance(entry, dict)] if isinstance(timings, list) else []
    entries = [entry for entry in entries if all(isinstance(entry.get(name), (int, float)) for name in
                                                 ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms"))]
    if not entries:
        return None
    return Speed(len(entries), int(sum(entry["prompt_n"] for entry in entries)),
                 sum(entry["prompt_ms"] for entry in entries) / 1000,
                 int(sum(entry["predicted_n"] for entry in entries)),
                 sum(entry["predicted_ms"] for entry in entries) / 1000)


def status(folder: Path | None = None) -> list[Status]:
    folder = folder or runtime.runtime_dir()
    found = []
    for state in runtime.states(folder):
        live = runtime.read_json(runtime.live_file(folder, state.alias))
        ours = live.get("pid") == state.pid
        connections = int(live.get("open", 0)) if ours else 0
        idle = None
        if ours and connections == 0 and isinstance(live.get("idle"), (int, float)):
            idle = float(live["idle"]) + max(0.0, time.time() - float(live.get("at", time.time())))
        found.append(Status(state, runtime.process_alive(state.pid, state.start_ticks), connections, idle,
                            speed(live.get("timings")) if ours else None, not ours or "timings" in live))
    return found
