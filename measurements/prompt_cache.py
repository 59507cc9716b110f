"""The prompt cache for sampled retries (`prompt_cache = "sampled"`): how much faster is a retry, and is it
the same answer?

Issue 16's item 4. A restart asks the first request's prompt again with one line per earlier failure added,
so with llama.cpp's prompt cache the model reads only those lines; greedy requests never use the cache.
For each stub of FILE (default examples/sample.py) and, with --realcode N, the first N realcode tasks
(functions in their libraries' source trees, whose prompts carry the module's context), through the
product's own client and the embedded model started as the CLI starts it:
  1. attempt 1, greedy (never cached), as the loop asks it;
  2. the restart after one failure, sampled at the shipped retry temperature and a fixed seed, cache off;
  3. attempt 1 again, cut short after a token (the cache then holds what it holds after attempt 1);
  4. the same restart with the cache.
Printed: the median seconds before a retry's first token (reading its prompt: what the cache changes) and
per whole retry (which also depends on how long the answer is), without and with the cache, with ratios;
the prompt tokens each read; and how many retries gave byte for byte the same answer both ways (a sampled
answer computed from a cached prefix may round differently).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.workspace import workspace
from pycapsule.capsule import Capsule
from pycapsule.commands.model import SIZES
from pycapsule.config import DEFAULTS, Settings
from pycapsule.context import module_context
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.embedded_model.errors import EmbeddedModelError
from pycapsule.exit_codes import ExitCode
from pycapsule.generators import Returning
from pycapsule.model_client import Message, ModelError, ModelSettings, Programmer
from pycapsule.prompts import generate_messages, restart_messages

from measurements.progress import Progress, progress_for
from measurements.stubs import add_file_argument, stubs_of

FAILURE = "AssertionError: 1 of 2 examples failed; first: the result was None"
"""The one failure line the restart names (its wording does not change what is cached)."""
SEED = 2


@dataclass(frozen=True)
class Retry:
    first_token: float
    """Seconds from the request to the first streamed piece: mostly reading the prompt."""
    seconds: float
    prompt_tokens: int
    cached_tokens: int
    text: str
    completion_tokens: int = 0

    @property
    def read_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens


@dataclass(frozen=True)
class Pair:
    name: str
    without: Retry
    cached: Retry


def capsules_for(path: Path, realcode: int, stack: ExitStack) -> Iterator[tuple[str, Capsule]]:
    """Every stub of `path`, then the first `realcode` realcode tasks (their workspaces live in `stack`)."""
    for capsule in stubs_of(path):
        yield capsule.qualname, capsule
    if realcode:
        for task in load_tasks("realcode")[1][:realcode]:
            yield task.task_id, stack.enter_context(workspace(task)).capsule()


def timed(programmer: Programmer, messages: list[Message], temperature: float) -> Retry:
    sent = time.perf_counter()
    first: float | None = None
    answer = Returning(programmer.stream(messages, temperature=temperature, seed=SEED))
    for piece in answer:
        if first is None and isinstance(piece, str):
            first = time.perf_counter() - sent
    reply = answer.value
    return Retry(first if first is not None else reply.seconds, reply.seconds, reply.usage.prompt_tokens,
                 reply.usage.cached_tokens, reply.text, reply.usage.completion_tokens)


@dataclass(frozen=True)
class Clients:
    """Three clients of the same server (one slot): as the product asks, cut short after one token, and
    asking for the prompt cache."""

    plain: Programmer
    short: Programmer
    cached: Programmer

    @classmethod
    def of(cls, settings: ModelSettings) -> Clients:
        return cls(Programmer(settings), Programmer(replace(settings, max_tokens=1)),
                   Programmer(replace(settings, cache_sampled_prompts=True)))


def measure(clients: Clients, capsule: Capsule, name: str) -> Pair:
    context = module_context(capsule)
    first = generate_messages(capsule, context)
    restart = restart_messages(capsule, context, [FAILURE])
    temperature = DEFAULTS.retry_temperature
    clients.plain.complete(first)
    without = timed(clients.plain, restart, temperature)
    clients.short.complete(first)  # the cache now holds what it holds after attempt 1
    return Pair(name, without, timed(clients.cached, restart, temperature))


def bench(size: str, path: Path, realcode: int, on_progress: Progress | None = None) -> list[Pair]:
    report = on_progress or (lambda _line: None)
    pairs: list[Pair] = []
    with ExitStack() as stack:
        endpoint = stack.enter_context(start_local_endpoint(size, on_progress=report))
        settings = ModelSettings.from_settings(Settings(prompt_cache="never"), base_url=endpoint.base_url,
                                               model=endpoint.model, one_at_a_time=True, local=True)
        clients = Clients.of(settings)
        clients.plain.complete([{"role": "user", "content": "Say hi."}])  # warm-up
        for name, capsule in capsules_for(path, realcode, stack):
            pairs.append(measure(clients, capsule, name))
            report(f"{size}: {len(pairs)} measured ({name})")
    return pairs


def format_table(size: str, pairs: Sequence[Pair]) -> str:
    header = (f"{'retry':<10} {'s to 1st token':>15} {'x off':>6} {'s / retry':>10} {'x off':>6} "
              f"{'prompt tokens read':>19} {'same answers':>13}")
    lines = [header, "-" * len(header)]
    base_first = statistics.median(p.without.first_token for p in pairs)
    base = statistics.median(p.without.seconds for p in pairs)
    same = sum(p.without.text == p.cached.text for p in pairs)
    for label, retries in (("cache off", [p.without for p in pairs]), ("cached", [p.cached for p in pairs])):
        first = statistics.median(r.first_token for r in retries)
        seconds = statistics.median(r.seconds for r in retries)
        read = statistics.median(r.read_tokens for r in retries)
        lines.append(f"{label:<10} {first:>15.2f} {first / base_first:>6.2f} {seconds:>10.2f} "
                     f"{seconds / base:>6.2f} {read:>19.0f} "
                     f"{f'{same} of {len(pairs)}' if label == 'cached' else '-':>13}")
    prompt = statistics.median(p.without.prompt_tokens for p in pairs)
    lines.append(f"{size}: medians over {len(pairs)} restarts (prompt {prompt:.0f} tokens), sampled at "
                 f"{DEFAULTS.retry_temperature:g}, seed {SEED}; 'same answers': byte for byte the answer "
                 "without the cache")
    lines.append("")
    lines.append(f"{'task':<58} {'1st off':>8} {'1st cached':>11} {'s off':>6} {'s cached':>9} "
                 f"{'read off':>9} {'read cached':>12} same")
    for p in pairs:
        lines.append(f"{p.name[:58]:<58} {p.without.first_token:>8.1f} {p.cached.first_token:>11.1f} "
                     f"{p.without.seconds:>6.1f} {p.cached.seconds:>9.1f} "
                     f"{p.without.read_tokens:>9} {p.cached.read_tokens:>12} "
                     f"{'yes' if p.without.text == p.cached.text else 'no'}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_file_argument(parser)
    parser.add_argument("--size", choices=SIZES, default="1.5b", help="the model size (default: 1.5b)")
    parser.add_argument("--realcode", type=int, default=0, metavar="N",
                        help="also the first N realcode tasks (their libraries' sdists are fetched once)")


def run(args: argparse.Namespace) -> int:
    return run_prompts("prompt_cache", bench, format_table, args)


def run_prompts(name: str, measure: Callable[..., list[Any]], table: Callable[[str, list[Any]], str],
                args: argparse.Namespace) -> int:
    """`run` of a benchmark of prompts (`add_arguments`'s options): `measure(size, file, realcode,
    on_progress=...)` makes the rows, `table(size, rows)` prints them."""
    progress = progress_for(name)
    try:
        rows = measure(args.size, args.file, args.realcode, on_progress=progress)
    except (OSError, ValueError) as error:
        progress(f"cannot read the prompts: {error}")
        return ExitCode.USAGE
    except (EmbeddedModelError, ModelError) as error:
        progress(str(error))
        return ExitCode.MODEL_UNAVAILABLE
    if not rows:
        progress(f"{args.file} has no stubs to ask for")
        return ExitCode.USAGE
    print(table(args.size, rows))
    return 0
