"""What several answers at once cost the embedded model: llama.cpp's parallel slots, measured.

Issue 16's lever "several candidates per attempt": a retry could ask for k answers at once (sampled, at
the retry temperature) and keep the first that passes the examples, if k answers cost far less than k
times one. For each k (1 first, the baseline), the model is served with k slots and a context k times the
product's, so each slot has the product's; then, per round and per code prompt, k requests are sent at
once (temperature 0.5, a seed each, up to --max-tokens, prompt cache off) and the wall time until the
last answer ends is taken. Printed per k: the median wall time of a batch, its ratio to one answer's,
the seconds per answer, and the completion tokens per second of the batch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from openai import OpenAI
from pycapsule.commands.model import SIZES
from pycapsule.embedded_model.catalog import spec_for
from pycapsule.embedded_model.errors import EmbeddedModelError
from pycapsule.embedded_model.install import install
from pycapsule.embedded_model.serve import CONTEXT_SIZE, ServerOptions, default_threads
from pycapsule.exit_codes import ExitCode

from measurements.model import PROMPTS, SYSTEM, served_in_process
from measurements.progress import Progress, progress_for

TEMPERATURE = 0.5


@dataclass(frozen=True)
class Batch:
    seconds: float
    """From sending the k requests to the end of the last answer."""
    completion_tokens: int


@dataclass(frozen=True)
class SlotsResult:
    parallel: int
    batches: tuple[Batch, ...]

    @property
    def median_seconds(self) -> float:
        return statistics.median(b.seconds for b in self.batches)

    @property
    def tokens_per_second(self) -> float:
        return statistics.median(b.completion_tokens / b.seconds for b in self.batches)


def answer(client: OpenAI, model: str, prompt: str, seed: int, max_tokens: int) -> int:
    """One sampled answer, streamed as the product streams; its completion tokens."""
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        max_tokens=max_tokens, temperature=TEMPERATURE, seed=seed, stream=True,
        stream_options={"include_usage": True}, extra_body={"cache_prompt": False},
    )
    usage = None
    for chunk in stream:
        usage = chunk.usage or usage
    return usage.completion_tokens if usage else 0


def bench_slots(size: str, parallel: int, rounds: int, max_tokens: int, prompts: Sequence[str] = PROMPTS,
                on_progress: Progress | None = None) -> SlotsResult:
    report = on_progress or (lambda _line: None)
    spec = spec_for(size)
    options = ServerOptions(install(spec, on_progress=report), spec.alias, threads=default_threads(),
                            context=CONTEXT_SIZE * parallel, parallel=parallel)
    batches = []
    with served_in_process(options, timeout=600) as client, ThreadPoolExecutor(parallel) as pool:
        answer(client, spec.alias, prompts[0], 0, max_tokens)  # warm-up
        for round_number in range(rounds):
            for number, prompt in enumerate(prompts):
                seeds = [1000 * round_number + 10 * number + slot for slot in range(parallel)]
                started = time.perf_counter()
                tokens = list(pool.map(lambda seed, p=prompt: answer(client, spec.alias, p, seed, max_tokens),
                                       seeds))
                batches.append(Batch(time.perf_counter() - started, sum(tokens)))
            report(f"{size}, {parallel} at once: round {round_number + 1} of {rounds} done")
    return SlotsResult(parallel, tuple(batches))


def format_table(size: str, results: Sequence[SlotsResult], threads: int, load: float) -> str:
    baseline = results[0].median_seconds
    header = f"{'at once':>7} {'batch s':>8} {'x one':>6} {'s / answer':>11} {'tok/s':>7}"
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(f"{r.parallel:>7} {r.median_seconds:>8.2f} {r.median_seconds / baseline:>6.2f} "
                     f"{r.median_seconds / r.parallel:>11.2f} {r.tokens_per_second:>7.1f}")
    lines.append(f"{size}: medians over {len(results[0].batches)} batches (code prompts x rounds), "
                 f"temperature {TEMPERATURE}, {threads} threads, load average {load:.1f} at the start")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", choices=SIZES, default="1.5b", help="the model size (default: 1.5b)")
    parser.add_argument("--parallel", type=int, action="append",
                        help="answers at once to measure beside one; repeat for several (default: 2 and 3)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the code prompts (default: 2)")
    parser.add_argument("--max-tokens", type=int, default=256, help="per answer (default: 256)")


def run(args: argparse.Namespace) -> int:
    progress = progress_for("slots")
    counts = [1, *sorted(set(args.parallel or [2, 3]) - {1})]
    if any(k < 1 for k in counts) or args.rounds < 1 or args.max_tokens < 1:
        progress("--parallel, --rounds and --max-tokens must be at least 1")
        return ExitCode.USAGE
    load = os.getloadavg()[0]
    try:
        results = [bench_slots(args.size, k, args.rounds, args.max_tokens, on_progress=progress)
                   for k in counts]
    except EmbeddedModelError as error:
        progress(str(error))
        return ExitCode.MODEL_UNAVAILABLE
    print(format_table(args.size, results, default_threads(), load))
    return 0
