"""`pycapsule model install | list | serve | status | stop`: the embedded local model."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pycapsule.commands import SUMMARIES
from pycapsule.commands.options import Subcommands
from pycapsule.config import load_settings
from pycapsule.embedded_model.catalog import (
    CATALOG,
    SIZES,
    ModelSpec,
    is_installed,
    model_dir,
    model_path,
    spec_for,
)
from pycapsule.embedded_model.errors import EmbeddedModelError as ModelError
from pycapsule.embedded_model.own_file import own_spec
from pycapsule.embedded_model.provenance import described, read_record
from pycapsule.exit_codes import ExitCode
from pycapsule.terminal import terminal_safe

if TYPE_CHECKING:
    from pycapsule.embedded_model.fetching import Step
    from pycapsule.embedded_model.shared import Speed, Status

SIZE_HELP = "default: the embedded_model_size setting ($PYCAPSULE_EMBEDDED_MODEL_SIZE), else 1.5b"


def _progress(line: str) -> None:
    print(terminal_safe(f"pycapsule: {line}"), file=sys.stderr, flush=True)


def install_shown(spec: ModelSpec, stream: TextIO | None = None) -> Path:
    """`install(spec)` with its progress on `stream` (stderr): on a terminal its first and last lines and
    one progress bar between them; elsewhere (a pipe, a log) a few plain lines."""
    from pycapsule.embedded_model.install import install

    stream = stream or sys.stderr
    if not stream.isatty():
        return install(spec, on_progress=lambda line: print(terminal_safe(f"pycapsule: {line}"), file=stream,
                                                               flush=True))
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(file=stream, highlight=False, emoji=False)
    bar = Progress(TextColumn("pycapsule: {task.description}"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn(), console=console, transient=True)
    task = bar.add_task("downloading", total=spec.total_size, start=False)
    words = {"download": "downloading", "verify": "verifying"}

    def step(step: Step) -> None:
        if not bar.live.is_started:
            bar.start()
            bar.start_task(task)  # the time left counts from the first step
        # a new phase, or the next source starting its download over
        if bar.tasks[0].description != words[step.phase] or step.done < bar.tasks[0].completed:
            bar.reset(task, total=step.total, description=words[step.phase])
        bar.update(task, completed=step.done)

    try:
        return install(spec, on_progress=lambda line: console.print(terminal_safe(f"pycapsule: {line}"),
                                                                    markup=False),
                       on_step=step)
    finally:
        bar.stop()


def register(commands: Subcommands) -> None:
    model = commands.add_parser("model", help=SUMMARIES["model"])
    actions = model.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    install = actions.add_parser("install", help="download, join and verify a model file")
    install.add_argument("--size", choices=SIZES, help=SIZE_HELP)
    actions.add_parser("list", help="show installed models")
    serve = actions.add_parser("serve", help="serve a model on 127.0.0.1 (OpenAI-compatible)")
    serve.add_argument("--size", choices=SIZES, help=SIZE_HELP)
    serve.add_argument("--port", type=int, default=0, help="the port to listen on; 0 (default) picks a free "
                       "one, printed on stdout")
    status = actions.add_parser("status", help="say whether your shared model server runs: its pid, threads, "
                                "idle time, GPU layers, tokens/s")
    status.add_argument("--json", action="store_true", help="one JSON object")
    actions.add_parser("stop", help="stop your shared model server (the next run starts it again)")


def run(args: argparse.Namespace) -> int:
    action = {"install": _install, "list": _list, "serve": _serve, "status": _status,
              "stop": _stop}[args.model_command]
    try:
        return action(args)
    except ModelError as error:
        print(f"pycapsule: {error}", file=sys.stderr)
        return ExitCode.MODEL_UNAVAILABLE


def install_before_a_run(size: str, own_file: str | None = None) -> None:
    """On a terminal, install the embedded model if it is missing, with one progress bar, before a run starts
    it (the run would say each step as a line); nothing when the run uses the user's own file (`own_file`).
    A failure is left to the run, which tries again and says it as for any model that cannot start."""
    if sys.stderr.isatty() and own_file is None:
        with contextlib.suppress(ModelError):
            install_shown(spec_for(size))


def _install(args: argparse.Namespace) -> int:
    spec, own_file = _chosen(args)
    if own_file is not None:
        _progress(f"runs use your own model file {own_file} (the embedded_model_file setting): nothing to "
                  "install; `--size` installs a model of the catalog")
        print(own_file)
        return 0
    print(install_shown(spec))
    return 0


def _chosen(args: argparse.Namespace) -> tuple[ModelSpec, str | None]:
    """--size; else your own file (the `embedded_model_file` setting, checked) when it is set, else the
    `embedded_model_size` setting, from your own configuration (a project's file cannot choose the model),
    its warnings said. (The spec, the own file's path or None.)"""
    if args.size:
        return spec_for(args.size), None
    loaded = load_settings(None)
    for warning in loaded.warnings:
        _progress(f"warning: {warning}")
    own_file = loaded.settings.embedded_model_file
    if own_file is not None:
        return own_spec(own_file), own_file
    return spec_for(loaded.settings.embedded_model_size), None


def _list(_args: argparse.Namespace) -> int:
    directory = model_dir()
    print(f"models in {directory}")
    for spec in CATALOG.values():
        installed = is_installed(spec, directory)
        if spec.test_only and not installed:
            continue
        state = "installed" if installed else "not installed"
        size_mb = spec.total_size / 1e6
        origin = f", from {described(read_record(model_path(spec, directory), spec))}" if installed else ""
        print(f"  {spec.size:<5} {state:<14} {size_mb:>7.1f} MB  {spec.filename}  ({spec.note}{origin})")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from pycapsule.embedded_model.serve import ServerOptions, exit_at_once, serve_until

    spec, own_file = _chosen(args)
    path = Path(own_file) if own_file is not None else install_shown(spec)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    def announce(base_url: str, model: str) -> None:
        _progress(f"serving {model} at {base_url} (OpenAI-compatible; Ctrl-C stops)")
        print(base_url, flush=True)

    gpu_layers = load_settings(None).settings.model_gpu_layers
    if gpu_layers and (note := _gpu_note(gpu_layers)):
        _progress(f"warning: {note}")
    serve_until(ServerOptions(path, spec.alias, port=args.port, gpu_layers=gpu_layers), announce, stop)
    _progress("stopped")
    exit_at_once(0)



def _status(args: argparse.Namespace) -> int:
    from pycapsule.embedded_model.runtime import runtime_dir
    from pycapsule.embedded_model.shared import gpu_note, status

    folder = runtime_dir()
    found = [entry for entry in status(folder) if entry.running]
    files = _model_files()
    loaded = load_settings(None)
    own_file = loaded.settings.embedded_model_file
    own = None if own_file is None else {
        "path": own_file, "setting_source": loaded.sources.get("embedded_model_file"),
        "source": "your own file (embedded_model_file)"}
    gpu_layers = loaded.settings.model_gpu_layers
    # the running server's own record, else what a server started now would find
    gpu = [gpu_note(entry.state, gpu_layers) for entry in found] if found else \
        [_gpu_note(gpu_layers) if gpu_layers else None]
    if args.json:
        print(json.dumps({"runtime_dir": str(folder), "servers": [{
            "model": entry.state.alias, "pid": entry.state.pid, "base_url": entry.state.base_url,
            "threads": entry.state.threads, "model_path": entry.state.model_path,
            "started": entry.state.started, "idle_timeout": entry.state.idle_timeout,
            "open_connections": entry.open_connections, "idle_seconds": entry.idle_seconds,
            "gpu_layers": entry.state.gpu_layers, "gpu_layers_asked": entry.state.gpu_layers_asked,
            "gpu_device": entry.state.gpu_device or None, "speed": _speed_json(entry.speed),
            "keeps_timings": entry.keeps_timings,
        } for entry in found], "model_dir": str(model_dir()), "model_files": files,
            "own_file": own, "model_gpu_layers": gpu_layers,
            "gpu_note": next((note for note in gpu if note), None)}, indent=2))
        return 0
    if not found:
        print(f"no shared model server is running (runtime folder {folder})")
    for note in dict.fromkeys(note for note in gpu if note):
        print(f"{note}.")
    for entry in found:
        state = entry.state
        if entry.open_connections:
            idle = f"serving {entry.open_connections} connection{'s' if entry.open_connections != 1 else ''}"
        elif entry.idle_seconds is not None:
            idle = f"idle {_duration(entry.idle_seconds)} (stops after {_duration(state.idle_timeout)} idle)"
        else:
            idle = "idle time unknown"
        threads = f"{state.threads} thread{'s' if state.threads != 1 else ''}"
        offloaded = f", {state.gpu_layers} layers on {state.gpu_device}" if state.gpu_layers else ""
        print(f"{state.alias}: running, pid {state.pid}, {threads}{offloaded}, at {state.base_url}, "
              f"up {_duration(time.time() - state.started)}, {idle}")
        print(f"{state.alias}: {_speed_sentence(entry)}")
    for file in files:
        print(f"{file['file']}: {file['size']} model file, from {file['source_label']}")
    if own is not None:
        print(f"runs use your own model file {own_file} (embedded_model_file, set in "
              f"{own['setting_source']}): not downloaded, not pinned")
    return 0


def _gpu_note(gpu_layers: int) -> str | None:
    """What a server started now would say of `gpu_layers` (it asks the installed runtime for its devices)."""
    from pycapsule.embedded_model.errors import ModelServerError
    from pycapsule.embedded_model.serve import gpu_offload

    try:
        return gpu_offload(gpu_layers).note()
    except ModelServerError as error:
        return str(error).rstrip(".")


def _speed_sentence(entry: Status) -> str:
    if entry.speed is not None:
        return entry.speed.sentence()
    if not entry.keeps_timings:
        return ("tokens/s not kept by this server (started by an older pycapsule; `pycapsule model stop` "
                "renews it)")
    return "no request timed yet (tokens/s come from llama.cpp's timings of the requests it answers)"


def _speed_json(speed: Speed | None) -> dict[str, object] | None:
    if speed is None:
        return None
    return {"requests": speed.requests, "writes_tokens_per_second": speed.writes_per_second,
            "reads_tokens_per_second": speed.reads_per_second, "written_tokens": speed.written_tokens,
            "written_seconds": speed.written_seconds, "read_tokens": speed.read_tokens,
            "read_seconds": speed.read_seconds, "source": "llama.cpp's timings of its last requests"}


def _model_files() -> list[dict[str, object]]:
    """The installed model files and the source that served each (None: not recorded, an older install)."""
    directory = model_dir()
    files: list[dict[str, object]] = []
    for spec in CATALOG.values():
        if is_installed(spec, directory):
            path = model_path(spec, directory)
            record = read_record(path, spec)
            files.append({"size": spec.size, "file": spec.filename, "path": str(path),
                          "source": record.get("source") if record else None,
                          "source_label": described(record)})
    return files


def _stop(_args: argparse.Namespace) -> int:
    from pycapsule.embedded_model.runtime import runtime_dir
    from pycapsule.embedded_model.shared import stop

    folder = runtime_dir()
    stopped = stop(folder)
    for state in stopped:
        print(f"stopped the shared model server {state.alias} (pid {state.pid})")
    if not stopped:
        print(f"no shared model server is running (runtime folder {folder})")
    return 0


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
