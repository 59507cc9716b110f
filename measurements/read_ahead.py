"""A stub's first request read ahead (issue 48 item 2): how much sooner it writes, and is it the same answer?

The language server reads a stub's first request into the embedded model's cache while the user pauses on
it (embedded_model/read_ahead.py). For each stub of FILE (default examples/sample.py) and, with --realcode
N, the first N realcode tasks (functions in their libraries' source trees, whose prompts carry the module's
context), through the product's own client and the embedded model started as the CLI starts it:
  1. the first request as the loop builds it (`loop.first_request`), read fresh: the baseline;
  2. the same prompt read ahead (its whole 512-token batches), timed on its own;
  3. the same request again, now taking what was read ahead from the cache.
Printed: the median seconds to the first token and per whole request, fresh and read ahead, with ratios;
the prompt tokens each read; the seconds the read-ahead took; how many answers are the same byte for byte
(they must all be).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from pycapsule.config import Settings
from pycapsule.context import module_context
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.loop import first_request
from pycapsule.model_client import ModelSettings, Programmer

from measurements import prompt_cache
from measurements.progress import Progress
from measurements.prompt_cache import Retry, capsules_for, timed


@dataclass(frozen=True)
class Pair:
    name: str
    fresh: Retry
    read_ahead: Retry
    reading_ahead: float
    """Seconds the read-ahead took (while the user pauses, in the editor)."""
    held: int


def bench(size: str, path: Path, realcode: int, on_progress: Progress | None = None) -> list[Pair]:
    report = on_progress or (lambda _line: None)
    pairs: list[Pair] = []
    settings = Settings()
    with ExitStack() as stack:
        endpoint = stack.enter_context(start_local_endpoint(size, on_progress=report))
        programmer = Programmer(ModelSettings.from_settings(
            settings, base_url=endpoint.base_url, model=endpoint.model, one_at_a_time=True, local=True))
        programmer.complete([{"role": "user", "content": "Say hi."}])  # warm-up
        for name, capsule in capsules_for(path, realcode, stack):
            messages = first_request(capsule, programmer=programmer, settings=settings,
                                     context=module_context(capsule))
            fresh = timed(programmer, messages, settings.temperature)
            began = time.perf_counter()
            held = programmer.read_ahead(messages)
            reading = time.perf_counter() - began
            pairs.append(Pair(name, fresh, timed(programmer, messages, settings.temperature), reading, held))
            report(f"{size}: {len(pairs)} measured ({name})")
    return pairs


def format_table(size: str, pairs: Sequence[Pair]) -> str:
    header = (f"{'request':<11} {'s to 1st token':>15} {'x fresh':>8} {'s / request':>12} {'x fresh':>8} "
              f"{'prompt tokens read':>19} {'same answers':>13}")
    lines = [header, "-" * len(header)]
    base_first = statistics.median(p.fresh.first_token for p in pairs)
    base = statistics.median(p.fresh.seconds for p in pairs)
    same = sum(p.fresh.text == p.read_ahead.text for p in pairs)
    rows = (("fresh", [p.fresh for p in pairs]), ("read ahead", [p.read_ahead for p in pairs]))
    for label, requests in rows:
        first = statistics.median(r.first_token for r in requests)
        seconds = statistics.median(r.seconds for r in requests)
        read = statistics.median(r.read_tokens for r in requests)
        lines.append(f"{label:<11} {first:>15.2f} {first / base_first:>8.2f} {seconds:>12.2f} "
                     f"{seconds / base:>8.2f} {read:>19.0f} "
                     f"{f'{same} of {len(pairs)}' if label == 'read ahead' else '-':>13}")
    prompt = statistics.median(p.fresh.prompt_tokens for p in pairs)
    reading = statistics.median(p.reading_ahead for p in pairs)
    lines.append(f"{size}: medians over {len(pairs)} first requests (prompt {prompt:.0f} tokens, greedy); "
                 f"reading ahead took {reading:.2f} s (median); 'same answers': byte for byte the fresh one")
    lines.append("")
    lines.append(f"{'task':<58} {'prompt':>7} {'held':>5} {'1st fresh':>10} {'1st ahead':>10} "
                 f"{'s fresh':>8} {'s ahead':>8} {'s reading':>10} same")
    for p in pairs:
        fresh, ahead = p.fresh, p.read_ahead
        lines.append(f"{p.name[:58]:<58} {fresh.prompt_tokens:>7} {p.held:>5} {fresh.first_token:>10.1f} "
                     f"{ahead.first_token:>10.1f} {fresh.seconds:>8.1f} {ahead.seconds:>8.1f} "
                     f"{p.reading_ahead:>10.1f} {'yes' if fresh.text == ahead.text else 'no'}")
    return "\n".join(lines)


add_arguments = prompt_cache.add_arguments


def run(args: argparse.Namespace) -> int:
    return prompt_cache.run_prompts("read_ahead", bench, format_table, args)
