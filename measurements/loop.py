"""The self-debugging loop's own cost per attempt, the model's time excluded.

Everything an attempt does besides waiting for the model is measured: building the prompt,
extracting and splicing the code, the doctest run in the warm sandbox, condensing the failure and
recording the attempt in the history database. The model's share is excluded by definition, so
its answers are replayed from memory (alternately a wrong and a right body, so half the attempts
fail and get condensed) and the time inside the model call is subtracted as well.

Baseline, in the same process: the bare `sandbox.run` of the same candidate module. The report
gives medians (and p90) and the loop/baseline ratio, so a slow or busy machine shows as such.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Sequence
from pathlib import Path

import platformdirs
from pycapsule.capsule import capsule_by_qualname
from pycapsule.commands.options import add_backend
from pycapsule.config import Settings
from pycapsule.context import module_context
from pycapsule.debugging.answer_watch import AnswerTarget
from pycapsule.debugging.signature import splice
from pycapsule.events import AttemptFinished, Finished
from pycapsule.executor import job_for
from pycapsule.exit_codes import ExitCode
from pycapsule.history import History
from pycapsule.loop import self_debug
from pycapsule.model_client import ModelSettings, Reply, Usage
from pycapsule.sandbox.api import Sandbox, SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox

from measurements.timing import figures

TARGET_MS = 30.0

MODULE = '''"""Inventory helpers."""
import math
from collections import Counter

UNIT = 1


def restock(levels, minimum):
    """Items below `minimum`, with how many to order, most needed first.

    >>> restock({"nails": 3, "screws": 40, "bolts": 0}, 10)
    [('bolts', 10), ('nails', 7)]
    >>> restock({}, 5)
    []
    """
    ...


def total(levels):
    return sum(levels.values())
'''

WRONG = """Here is the function:
```python
def restock(levels, minimum):
    short = [(name, minimum - count) for name, count in levels.items() if count < minimum]
    return sorted(short, key=lambda item: item[1])
```
"""

RIGHT = """```python
def restock(levels, minimum):
    short = [(name, minimum - count) for name, count in levels.items() if count < minimum]
    return sorted(short, key=lambda item: (-item[1], item[0]))
```
"""


class ReplayProgrammer:
    """Answers instantly with the next recorded reply: the model's time is not what is measured. It is an
    endpoint, not the embedded model, so its answers are whole (never prefilled)."""

    settings = ModelSettings(base_url=None, model="replay")

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.calls = 0

    def stream(self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, seed: int | None = None,
               cancel: threading.Event | None = None, progress: bool = False,
               target: AnswerTarget | None = None) -> Generator[str, None, Reply]:
        text = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        for start in range(0, len(text), 16):
            yield text[start:start + 16]
        return Reply(text, Usage(sum(len(m["content"]) for m in messages) // 4, len(text) // 4), "stop",
                     "replay", 0.0)

    def close(self) -> None:
        pass


def _row(label: str, median: float, p90: float | None = None) -> None:
    tail = f"   p90 {p90:7.1f} ms" if p90 is not None else ""
    print(f"  {label:46} median {median:7.1f} ms{tail}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--attempts", type=int, default=50, metavar="N",
                        help="attempts to time, half of them failing (default 50)")
    add_backend(parser)


def run(args: argparse.Namespace) -> int:
    attempts = max(2, args.attempts)
    # a project folder where user projects live (not /tmp): under the user's cache dir
    cache = Path(platformdirs.user_cache_dir("pycapsule"))
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="measurements-loop-", dir=cache) as folder:
        path = Path(folder) / "inventory.py"
        path.write_text(MODULE)
        try:
            sandbox = open_sandbox(args.backend, Path(folder))
        except SandboxUnavailable as error:
            print(f"measurements loop: {error}", file=sys.stderr)
            return ExitCode.SANDBOX_UNAVAILABLE
        try:
            return _bench(sandbox, path, attempts)
        finally:
            sandbox.close()


def _bench(sandbox: Sandbox, path: Path, attempts: int) -> int:
    capsule = capsule_by_qualname(path.read_text(), "restock", path)
    settings = Settings(max_attempts=2, restart_after=2)
    history = History(path.parent / "history.sqlite3")
    right_source = splice(capsule, RIGHT.split("```python\n")[1].split("```")[0]).new_source
    job = job_for(capsule, right_source, settings.job_timeout)
    for _ in range(3):  # warm the worker and the caches once, as a long-running editor session would be
        sandbox.run(job)

    overhead: list[float] = []
    model: list[float] = []
    per_run_setup: list[float] = []
    baseline: list[float] = []
    failures = 0
    while len(overhead) < attempts:
        began = time.perf_counter()
        context = module_context(capsule)
        per_run_setup.append(time.perf_counter() - began)
        programmer = ReplayProgrammer([WRONG, RIGHT])
        for event in self_debug(capsule, programmer=programmer, sandbox=sandbox,  # type: ignore[arg-type]
                                settings=settings, context=context, history=history):
            if isinstance(event, AttemptFinished):
                overhead.append(event.seconds - event.model_seconds)
                model.append(event.model_seconds)
                failures += not event.passed
            elif isinstance(event, Finished) and event.outcome.status not in ("passed", "passed_loosely"):
                print(f"measurements loop: the loop failed: {event.outcome.message}", file=sys.stderr)
                return 1
        # the baseline, interleaved so both see the same machine load
        began = time.perf_counter()
        result = sandbox.run(job)
        baseline.append(time.perf_counter() - began)
        if not result.passed:
            print(f"measurements loop: the baseline job failed: {result.status} {result.detail}",
                  file=sys.stderr)
            return 1
    history.close()

    loop, base = figures(overhead), figures(baseline)
    print(f"measurements loop: {len(overhead)} attempts ({failures} failing, condensed) with the warm "
          f"'{sandbox.name}' sandbox, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    _row("loop overhead per attempt (all but the model)", loop.median_ms, loop.percentile_ms)
    _row("baseline: bare sandbox.run of the same module", base.median_ms, base.percentile_ms)
    print(f"  {'ratio loop / baseline':46} {loop.median_ms / base.median_ms:7.2f}x")
    _row("the loop's own share (overhead - baseline)", loop.median_ms - base.median_ms)
    _row("per generation, once: module context", figures(per_run_setup).median_ms)
    _row("replayed model call (excluded above)", figures(model).median_ms)
    verdict = "met" if loop.median_ms <= TARGET_MS else "NOT met"
    print(f"  target: median <= {TARGET_MS:.0f} ms per attempt: {verdict}")
    return 0
