"""The shared model server's own process: llama.cpp on a unix socket, the gate in front, its lifetime.

Started by `shared.find_or_start` as `python -m pycapsule.embedded_model.daemon --shared FOLDER --detach`
and run here: it forks away from its starter, so it belongs to no client (a client's exit, Ctrl-C or
crash never stops it), and stops by itself:
- after `idle_timeout` seconds with no connection (the `model_idle_timeout` setting);
- when its model file changes or disappears (a new install, a deleted cache);
- when no state file names it 30 s after it announced itself (its starter died before recording it:
  nobody could find it);
- on SIGTERM/SIGINT (`pycapsule model stop`).
Before it stops listening it removes the state file that names it, under the same lock the clients
take, so a client either finds it still serving or finds no state and starts a new one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from pycapsule.embedded_model import runtime
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.embedded_model.gate import Gate, can_check_peers
from pycapsule.embedded_model.serve import (
    _RUNNING,
    CONTEXT_SIZE,
    ServerOptions,
    default_threads,
    exit_at_once,
    gpu_offload,
    start_server,
)

TICK = 0.5
RECORD_WITHIN = 30.0
"""Seconds the starter has to record the server in its state file."""


def _say(message: dict[str, object]) -> None:
    """One JSON line to the starter; a starter that is gone ends this server (nobody could find it)."""
    try:
        print(json.dumps(message), flush=True)
    except (BrokenPipeError, OSError):
        os._exit(3)


def _file_id(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def run_shared(model_path: Path, alias: str, folder: Path, threads: int, context: int,
               idle_timeout: float, *, detach: bool, gpu_layers: int = 0) -> int:
    if detach and os.fork() > 0:
        os._exit(0)  # the starter reaps the parent at once; the child is nobody's child but init's
    pid = os.getpid()
    stop = threading.Event()
    why: list[str] = []

    def on_signal(signum: int, _frame: object) -> None:
        why.append(f"stopped by {signal.Signals(signum).name}")
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    _say({"pid": pid})
    print(f"pycapsule: shared model server pid {pid}: {alias} ({model_path}), {threads} threads, "
          f"idle timeout {idle_timeout:g} s", file=sys.stderr, flush=True)
    try:
        if not can_check_peers():
            raise ModelServerError("the shared model server cannot tell which user connects "
                                   "(/proc/net/tcp is not readable), so it does not start.")
        upstream = runtime.socket_path(folder, pid)
        with contextlib.suppress(FileNotFoundError):
            upstream.unlink()
        offload = gpu_offload(gpu_layers)
        print(f"pycapsule: shared model server pid {pid}: "
              + (offload.note() or (f"{offload.layers} layers offloaded to {offload.device}" if offload.layers
                                    else f"on the CPU (GPU device: {offload.device or 'none'})")),
              file=sys.stderr, flush=True)
        _RUNNING.append(start_server(ServerOptions(model_path, alias, threads=threads, context=context,
                                                   socket=upstream, gpu_layers=offload.layers)))
        os.chmod(upstream, 0o600)
        gate = Gate(upstream).start()
    except ModelServerError as error:
        _say({"error": str(error)})
        return 2
    model_id = _file_id(model_path)
    _say({"base_url": gate.base_url, "model": alias, "threads": threads, "gpu_layers": offload.layers,
          "gpu_device": offload.device})
    _stdout_to_null()
    reason = _watch(gate, stop, folder, alias, pid, model_path, model_id, idle_timeout, threads) or \
        (why[0] if why else "stopped")
    gate.close()
    _forget(folder, alias, pid, reason)
    with contextlib.suppress(OSError):
        upstream.unlink()
    print(f"pycapsule: shared model server pid {pid} {reason}", file=sys.stderr, flush=True)
    exit_at_once(0)


def _stdout_to_null() -> None:
    """The starter's pipe is closed on our side once it has what it needs: it must not wait for us."""
    null = os.open(os.devnull, os.O_WRONLY)
    sys.stdout.flush()
    os.dup2(null, 1)
    os.close(null)


def _watch(gate: Gate, stop: threading.Event, folder: Path, alias: str, pid: int, model_path: Path,
           model_id: tuple[int, int, int] | None, idle_timeout: float, threads: int) -> str | None:
    """Serve until a reason to stop; returns it (None: a signal, named by the caller)."""
    recorded, record_by = False, time.monotonic() + RECORD_WITHIN
    written: tuple[int, int, int] | None = None
    while not stop.wait(TICK):
        if not recorded:
            state = runtime.read_state(folder, alias)
            recorded = state is not None and state.pid == pid
            if not recorded and time.monotonic() > record_by:
                return "was never recorded by the process that started it"
        now_id = _file_id(model_path)
        if now_id != model_id:
            return f"stopped: its model file {'disappeared' if now_id is None else 'changed'}"
        connections, idle, total = gate.activity()
        timed_so_far, timed = gate.timings()
        if connections == 0 and idle >= idle_timeout:
            with runtime.exclusive(runtime.lock_file(folder, alias), timeout=5.0):
                # a client holding the lock checked this server's health: a connection, so not idle now
                connections, idle, total = gate.activity()
                if connections == 0 and idle >= idle_timeout:
                    gate.close()
                    _forget(folder, alias, pid, f"stopped after {idle_timeout:g} s idle")
                    return f"stopped after {idle_timeout:g} s idle"
        if written != (connections, total, timed_so_far):
            written = (connections, total, timed_so_far)
            _write_live(folder, alias, {"pid": pid, "open": connections, "idle": idle, "at": time.time(),
                                        "idle_timeout": idle_timeout, "threads": threads, "stopping": None,
                                        "timings": timed})
    return None


def _write_live(folder: Path, alias: str, values: dict[str, object]) -> None:
    with contextlib.suppress(OSError):
        runtime.write_atomically(runtime.live_file(folder, alias), json.dumps(values))


def _forget(folder: Path, alias: str, pid: int, reason: str) -> None:
    """Remove the state file if it still names this server; say why it stopped in the live file. (Not
    under the lock when a signal stops it: `pycapsule model stop` or a starter replacing it holds the
    lock while it waits for this exit, and writes no new state before.)"""
    _write_live(folder, alias, {"pid": pid, "open": 0, "at": time.time(), "stopping": reason})
    state = runtime.read_state(folder, alias)
    if state is not None and state.pid == pid:
        with contextlib.suppress(OSError):
            runtime.state_file(folder, alias).unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pycapsule.embedded_model.daemon")
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--ctx", type=int, default=CONTEXT_SIZE)
    parser.add_argument("--shared", required=True, type=Path, metavar="FOLDER",
                        help="the user's runtime folder, where this server's state goes (docs/model.md)")
    parser.add_argument("--idle-timeout", type=float, default=900.0,
                        help="exit after this many seconds without a connection")
    parser.add_argument("--detach", action="store_true",
                        help="leave the starting process (fork; the parent exits at once)")
    parser.add_argument("--gpu-layers", type=int, default=0,
                        help="layers to offload to a GPU where the runtime reports one (model_gpu_layers)")
    args = parser.parse_args(argv)
    return run_shared(args.model, args.alias, args.shared, args.threads or default_threads(), args.ctx,
                      args.idle_timeout, detach=args.detach, gpu_layers=args.gpu_layers)


if __name__ == "__main__":
    sys.exit(main())
