"""Serve one model file on 127.0.0.1 through llama.cpp's own OpenAI-compatible HTTP server.

xllamacpp embeds llama.cpp's C++ server: `xllamacpp.Server(params)` loads the model and listens
(`/v1/chat/completions` with real token-by-token SSE streaming and usage, `/v1/models`, `/health`)
on background threads, so this module only chooses the parameters and keeps the process alive.

Run as `python -m pycapsule.embedded_model.serve --model PATH --alias NAME` it serves on a TCP port of
127.0.0.1 until SIGTERM/SIGINT (`pycapsule model serve`); the user's shared server (daemon.py) starts
llama.cpp through `start_server` too.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

from pycapsule.embedded_model.errors import ModelServerError

HOST = "127.0.0.1"
CONTEXT_SIZE = 4096
# Upper bound on generated tokens when a request names none: a runaway reply must end.
DEFAULT_MAX_TOKENS = 2048
PROMPT_BATCH = 512
_RUNNING: list[Any] = []
"""Servers started by `serve_until`, never dropped (see `exit_at_once`)."""


def physical_cores() -> int:
    """CPU cores usable by this process, counting hyper-threads once (llama.cpp gains nothing from SMT)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    siblings = cores = 0
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "siblings":
                    siblings = int(value)
                elif key.strip() == "cpu cores":
                    cores = int(value)
                if siblings and cores:
                    break
    except (OSError, ValueError):
        pass
    threads_per_core = siblings // cores if siblings and cores and siblings >= cores else 1
    return max(1, usable // max(1, threads_per_core))


def default_threads() -> int:
    """$PYCAPSULE_MODEL_THREADS, else the physical cores not busy right now (at least one).

    llama.cpp's threads meet at a barrier after every layer: when another process holds one of
    them off its core, all wait. Measured here with the load average at 8 on 2 cores, the 0.5B
    model generated 0.6 tok/s on 2 threads and 4 tok/s on 1, so a busy core is left alone.
    "Busy" is sampled over a quarter second, not read from the load average: that lags by a
    minute, and right after a model ran it took one of two idle cores away (11 vs 20 tok/s).
    """
    override = os.environ.get("PYCAPSULE_MODEL_THREADS", "").strip()
    if override.isdigit() and int(override) > 0:
        return int(override)
    cores = physical_cores()
    return max(1, min(cores, cores - round(busy_cores())))


def busy_cores(window: float = 0.25) -> float:
    """How many cores' worth of CPU time other work used over `window` seconds (/proc/stat), else the
    1-minute load average where /proc is missing."""
    first = _cpu_times()
    if first is None:
        return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    time.sleep(window)
    second = _cpu_times()
    if second is None:
        return 0.0
    total = sum(second) - sum(first)
    idle = (second[3] + second[4]) - (first[3] + first[4])  # idle + iowait
    return 0.0 if total <= 0 else (total - idle) / total * (os.cpu_count() or 1)


def _cpu_times() -> list[int] | None:
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    return [int(value) for value in fields[1:8]] if fields and fields[0] == "cpu" else None


@dataclass(frozen=True)
class ServerOptions:
    model_path: Path
    alias: str
    port: int = 0
    threads: int = 0
    """0 = one per physical core."""
    context: int = CONTEXT_SIZE
    """Tokens of context, shared by the slots."""
    parallel: int = 1
    """Requests decoded together (llama.cpp's slots). The product asks one at a time (others queue);
    `python3 -m measurements slots` measures what several cost."""
    socket: Path | None = None
    """Listen on this unix socket instead of HOST:port (the shared server, behind its gate)."""
    speculative: Literal["off", "ngram", "draft"] = "off"
    """Speculative decoding: tokens drafted from n-grams already in the context ("ngram": an answer that
    copies the prompt's signature and docstring), or by `draft_model` ("draft"), then checked by the model.
    `python3 -m measurements speculative` measures both."""
    draft_model: Path | None = None
    gpu_layers: int = 0
    """Layers the user asks to offload to a GPU (the `model_gpu_layers` setting); used only where the runtime
    reports a GPU device (`gpu_offload`)."""


@dataclass(frozen=True)
class GpuOffload:
    """What llama.cpp offloads to a GPU: `asked` layers by the setting, `layers` really (0: none)."""

    asked: int
    layers: int
    device: str
    """The runtime's first GPU device ("" when it reports none)."""

    def note(self) -> str | None:
        """One sentence when the setting asks for layers the runtime cannot offload (None otherwise)."""
        if self.asked and not self.device:
            return (f"model_gpu_layers asks for {self.asked} layers on a GPU, but the llama.cpp runtime "
                    "(xllamacpp) reports no GPU device: the model runs on the CPU")
        return None


def gpu_devices() -> list[str]:
    """The GPUs the installed llama.cpp runtime can offload to, as "name (description)"; [] on a CPU build."""
    xllamacpp = _runtime()
    kinds = xllamacpp.ggml_backend_dev_type
    gpus = (kinds.GGML_BACKEND_DEVICE_TYPE_GPU, kinds.GGML_BACKEND_DEVICE_TYPE_IGPU)
    return [f"{device.get('name')} ({device.get('description')})" for device in xllamacpp.get_device_info()
            if device.get("type") in gpus]


def gpu_offload(asked: int) -> GpuOffload:
    """`asked` layers where the runtime has a GPU device, else none: the CPU runs it (never a failure)."""
    devices = gpu_devices()
    return GpuOffload(asked, asked if devices else 0, devices[0] if devices else "")


def runtime_missing(error: ImportError) -> str:
    """One sentence for a runtime that cannot load; names the system package when it is a known one."""
    reason = " ".join(str(error).split()).rstrip(".")
    hint = " (the OpenMP runtime: apt-get install libgomp1)" if "libgomp" in reason else ""
    return f"the model runtime xllamacpp cannot load: {reason}{hint}."


def _runtime() -> Any:
    """xllamacpp (heavy: loaded only where a server really starts), or a ModelServerError saying why not."""
    try:
        import xllamacpp
    except ImportError as error:  # e.g. a clean Debian without libgomp.so.1
        raise ModelServerError(runtime_missing(error)) from None
    return xllamacpp


def _params(options: ServerOptions) -> Any:
    xllamacpp = _runtime()
    params = xllamacpp.CommonParams()
    params.model.path = str(options.model_path)
    params.model_alias = {options.alias}
    params.hostnames = [str(options.socket)] if options.socket is not None else [HOST]
    params.port = options.port
    params.n_ctx = options.context
    params.n_parallel = options.parallel
    params.n_predict = DEFAULT_MAX_TOKENS
    # A prompt is read in batches of this many tokens, and a cancelled request (its client gone) stops only
    # between two: with llama.cpp's 2048 a real-code prompt (~1,500 tokens) went on using the cores for the
    # ~25 s it took to read after its client left. 512 is the size llama.cpp computes in anyway (n_ubatch),
    # so answers are unchanged (the same greedy text for a 1,204-token prompt; no measurable cost).
    params.n_batch = PROMPT_BATCH
    # Explicitly 0 when not asked: a GPU build of the runtime would otherwise offload every layer it can.
    params.n_gpu_layers = gpu_offload(options.gpu_layers).layers if options.gpu_layers else 0
    threads = options.threads or default_threads()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    kinds = xllamacpp.common_speculative_type
    if options.speculative == "ngram":
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    elif options.speculative == "draft" and options.draft_model is not None:
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        params.speculative.draft.mparams.path = str(options.draft_model)
        params.speculative.draft.cpuparams.n_threads = threads
        params.speculative.draft.cpuparams_batch.n_threads = threads
    # Greedy unless a request asks for a temperature (temperature 0 keeps only the most likely
    # token). top_k/top_p keep llama.cpp's defaults so that a request's temperature still samples.
    params.sampling.temp = 0.0
    # A greedy answer must not depend on the request before it. A prompt prefix reused from the cache
    # is computed in other batch splits, whose rounding changed the greedy answer to 3 of 6 HumanEval
    # prompts asked twice (0 of 6 without the cache; docs/results). Re-reading a prompt costs ~1-3 s.
    # Requests ask for the cache only where that holds (read_ahead.py) or for sampled retries.
    params.cache_prompt = False
    params.cache_ram_mib = 0
    params.ui = False
    params.endpoint_slots = False
    return params


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return True
    return False


def start_server(options: ServerOptions) -> Any:
    """Load the model and listen; returns the running `xllamacpp.Server` (keep a reference to keep it up)."""
    if not options.model_path.is_file():
        raise ModelServerError(
            f"the model file {options.model_path} does not exist; run `pycapsule model install`."
        )
    if not 0 <= options.port <= 65535:
        raise ModelServerError(f"port {options.port} is not a valid TCP port (0-65535).")
    if options.port and port_in_use(options.port):
        raise ModelServerError(
            f"port {options.port} on {HOST} is already in use; "
            "choose another with --port (0 picks a free one)."
        )
    xllamacpp = _runtime()
    where = f"its socket {options.socket}" if options.socket is not None else f"{HOST}:{options.port}"
    try:
        return xllamacpp.Server(_params(options))
    except RuntimeError:
        name = options.model_path.name
        raise ModelServerError(f"llama.cpp could not load {name} or listen on {where}.") from None


def serve_until(options: ServerOptions, announce: Callable[[str, str], None], stop: threading.Event) -> None:
    """Run the server until `stop` is set; `announce(base_url, model)` is called once it listens."""
    server = start_server(options)
    _RUNNING.append(server)
    announce(server.listening_address.rstrip("/") + "/v1", options.alias)
    while not stop.wait(0.5):
        pass


def exit_at_once(code: int) -> NoReturn:
    """End a process that served a model, without dropping the server first.

    Dropping it makes llama.cpp finish the answer it is streaming, holding the interpreter meanwhile;
    when the client has stopped reading (it is being interrupted too), Ctrl-C took 15 s, until the
    parent's SIGKILL. The operating system frees the model's memory either way."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pycapsule.embedded_model.serve")
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--ctx", type=int, default=CONTEXT_SIZE)
    parser.add_argument("--gpu-layers", type=int, default=0)
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    def announce(base_url: str, model: str) -> None:
        print(json.dumps({"base_url": base_url, "model": model}), flush=True)

    options = ServerOptions(args.model, args.alias, args.port, args.threads, args.ctx,
                            gpu_layers=args.gpu_layers)
    try:
        serve_until(options, announce, stop)
    except ModelServerError as error:
        print(json.dumps({"error": str(error)}), flush=True)
        return 2
    exit_at_once(0)


if __name__ == "__main__":
    sys.exit(main())
