"""How the measurement tools take and sum up timings: samples in seconds, medians and nearest-rank percentiles
in milliseconds."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Figures:
    """Timed samples summed up in milliseconds."""

    median_ms: float
    percentile_ms: float
    """The percentile `figures` was asked for (p90, p95)."""


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The sample `fraction` of the way up the sorted samples: nearest rank, always a measured value."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figures(seconds: Sequence[float], fraction: float = 0.9) -> Figures:
    return Figures(statistics.median(seconds) * 1000, percentile(seconds, fraction) * 1000)


def timed(count: int, once: Callable[[], object], gap: float = 0.0) -> list[float]:
    """Seconds each of `count` calls took, with `gap` seconds of rest (not timed) before each."""
    samples = []
    for _ in range(count):
        time.sleep(gap)
        started = time.perf_counter()
        once()
        samples.append(time.perf_counter() - started)
    return samples


async def timed_async(count: int, request: Callable[[int], Awaitable[object]]) -> list[float]:
    """Seconds each of `count` awaited requests took; the request is given its number."""
    samples = []
    for number in range(count):
        started = time.perf_counter()
        await request(number)
        samples.append(time.perf_counter() - started)
    return samples
