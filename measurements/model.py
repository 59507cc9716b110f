"""Measure the embedded model through its real HTTP endpoint: time to first token and tokens per second.

Each size is started like the CLI starts it (`start_local_endpoint`), warmed up with one request,
then asked a fixed set of code prompts, streaming, greedy, with the prompt cache off so every prompt
is processed in full. Time to first token is measured here, on the client; prompt and generation
speeds are the server's own timings (llama.cpp reports them in the last streamed chunk).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import openai
from openai import OpenAI
from pycapsule.commands.model import SIZES
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.embedded_model.errors import EmbeddedModelError as ModelError
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.embedded_model.serve import ServerOptions, default_threads, start_server
from pycapsule.exit_codes import ExitCode

from measurements.progress import Progress, progress_for

SYSTEM = "You are a Python programmer. Reply with one ```python code block containing the complete function."
PROMPTS: tuple[str, ...] = (
    'def is_palindrome(text: str) -> bool:\n'
    '    """Return True if text reads the same backwards, ignoring case.\n'
    "    >>> is_palindrome('Level')\n    True\n    \"\"\"\n",
    'def running_max(values: list[int]) -> list[int]:\n'
    '    """The largest value seen so far, at each position.\n'
    "    >>> running_max([1, 3, 2, 5])\n    [1, 3, 3, 5]\n    \"\"\"\n",
    'def word_counts(text: str) -> dict[str, int]:\n    """Count each lower-cased word.\n'
    "    >>> word_counts('a B a')\n    {'a': 2, 'b': 1}\n    \"\"\"\n",
    'def flatten(nested: list) -> list:\n    """Flatten arbitrarily nested lists.\n'
    '    >>> flatten([1, [2, [3, 4]], 5])\n    [1, 2, 3, 4, 5]\n    """\n',
    'def roman(number: int) -> str:\n    """Write a positive integer in Roman numerals.\n'
    "    >>> roman(1994)\n    'MCMXCIV'\n    \"\"\"\n",
)
MAX_TOKENS = 128


@dataclass(frozen=True)
class Sample:
    ttft: float
    """Seconds from sending the request to the first content token."""
    prompt_tokens: int
    prompt_tps: float
    completion_tokens: int
    generation_tps: float


@dataclass(frozen=True)
class SizeResult:
    size: str
    model: str
    start_seconds: float
    """Starting the server and loading the model (the file already installed)."""
    samples: tuple[Sample, ...]
    threads: int
    load_average: float
    """The 1-minute load average when the server started: other work slows llama.cpp down a lot."""

    @property
    def ttft_ms(self) -> float:
        return statistics.median(s.ttft for s in self.samples) * 1000

    @property
    def prompt_tps(self) -> float:
        return statistics.median(s.prompt_tps for s in self.samples)

    @property
    def generation_tps(self) -> float:
        return statistics.median(s.generation_tps for s in self.samples)


@contextmanager
def served_in_process(options: ServerOptions, timeout: float) -> Iterator[OpenAI]:
    """llama.cpp's server with `options`, in this process (for options the product does not use), and a
    client for it; the server stops when the block ends, also on an error, before the next one starts."""
    server = start_server(options)
    try:
        yield OpenAI(base_url=server.listening_address.rstrip("/") + "/v1", api_key="local", max_retries=0,
                     timeout=timeout)
    finally:
        del server


def measure(client: OpenAI, model: str, prompt: str) -> Sample:
    sent = time.perf_counter()
    first: float | None = None
    timings: dict = {}
    usage = None
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"cache_prompt": False},
    )
    for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
        timings = (chunk.model_extra or {}).get("timings") or timings
        usage = chunk.usage or usage
    if first is None or usage is None:
        raise ModelServerError("the local model server streamed no content or no usage for a bench prompt.")
    return Sample(
        ttft=first - sent,
        prompt_tokens=usage.prompt_tokens,
        prompt_tps=float(timings.get("prompt_per_second", 0.0)),
        completion_tokens=usage.completion_tokens,
        generation_tps=float(timings.get("predicted_per_second", 0.0)),
    )


def bench_size(
    size: str, prompts: Sequence[str] = PROMPTS, on_progress: Progress | None = None
) -> SizeResult:
    report = on_progress or (lambda _line: None)
    threads, load_average = default_threads(), os.getloadavg()[0]
    started = time.perf_counter()
    with start_local_endpoint(size, on_progress=report) as endpoint:
        start_seconds = time.perf_counter() - started
        client = OpenAI(base_url=endpoint.base_url, api_key="local", max_retries=0, timeout=600)
        try:
            measure(client, endpoint.model, prompts[0])  # warm-up: first-request allocations are not measured
            samples = []
            for number, prompt in enumerate(prompts, start=1):
                samples.append(measure(client, endpoint.model, prompt))
                report(f"{size}: prompt {number} of {len(prompts)} done")
        except openai.APIError as error:
            reason = endpoint.error(grace=2.0) or f"the local model server failed a request: {error}."
            raise ModelServerError(reason) from None
        return SizeResult(size, endpoint.model, start_seconds, tuple(samples), threads, load_average)


def format_table(results: Sequence[SizeResult]) -> str:
    header = (
        f"{'size':<6} {'model':<30} {'start s':>8} {'TTFT ms':>8} {'prompt tok/s':>13} {'gen tok/s':>10} "
        f"{'threads':>8} {'load':>5}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.size:<6} {r.model:<30} {r.start_seconds:>8.2f} {r.ttft_ms:>8.0f} {r.prompt_tps:>13.1f} "
            f"{r.generation_tps:>10.1f} {r.threads:>8} {r.load_average:>5.1f}"
        )
    prompt_tokens = statistics.median(s.prompt_tokens for r in results for s in r.samples)
    lines.append(
        f"medians over {len(results[0].samples)} prompts (~{prompt_tokens:.0f} prompt tokens, "
        f"up to {MAX_TOKENS} generated, greedy, prompt cache off), after one warm-up request"
    )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", choices=SIZES, action="append",
                        help="a model size to measure; repeat for several (default: 0.5b and 1.5b)")


def run(args: argparse.Namespace) -> int:
    progress = progress_for("model")
    try:
        results = [bench_size(size, on_progress=progress) for size in args.size or SIZES]
    except ModelError as error:
        progress(str(error))
        return ExitCode.MODEL_UNAVAILABLE
    print(format_table(results))
    return 0
