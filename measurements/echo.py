"""An answer given the rest of the head it repeats (`fast_forward_echo`, issue 66): how much sooner, and is it
the same answer?

For each stub of FILE (default examples/sample.py) and, with --realcode N, the first N realcode tasks
(functions in their libraries' source trees, with long docstrings), through the product's own client and
the embedded model started as the CLI starts it, the first request as the loop builds it, greedy, asked
twice in a row: written whole (the baseline), then with the head's rest given once the answer repeats
three lines of it (a second request goes on from there, reusing the slot's cache). Printed: the median
seconds per answer and tokens written, with ratios; how many answers were given the head; how many are the
same byte for byte (an answer that goes on from text read in a batch may round differently from one
written token by token).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from pycapsule.capsule import Capsule
from pycapsule.config import Settings
from pycapsule.context import module_context
from pycapsule.debugging.answer_watch import ECHOED, AnswerTarget, AnswerWatch
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.loop import first_request
from pycapsule.model_client import Message, ModelSettings, Programmer
from pycapsule.prompts import function_head

from measurements import prompt_cache
from measurements.progress import Progress
from measurements.prompt_cache import capsules_for


@dataclass(frozen=True)
class Answer:
    seconds: float
    written: int
    """Completion tokens (both requests' when the head was given)."""
    text: str


@dataclass(frozen=True)
class Pair:
    name: str
    written_whole: Answer
    given_the_head: Answer
    given: bool
    """The answer repeated enough of the head to be given its rest."""


def asked(programmer: Programmer, messages: list[Message], target: AnswerTarget) -> Answer:
    began = time.perf_counter()
    reply = programmer.complete(messages, target=target)
    return Answer(time.perf_counter() - began, reply.usage.completion_tokens, reply.text)


def repeats_the_head(text: str, target: AnswerTarget) -> bool:
    watch = AnswerWatch(target)
    return watch.feed(text + "\n") == ECHOED


def measure(whole: Programmer, fast: Programmer, capsule: Capsule, name: str, settings: Settings) -> Pair:
    context = module_context(capsule, settings.context_chars)
    messages = first_request(capsule, programmer=whole, settings=settings, context=context)
    target = AnswerTarget(capsule.name, capsule.module_source, context, function_head(capsule))
    written = asked(whole, messages, target)
    return Pair(name, written, asked(fast, messages, target), repeats_the_head(written.text, target))


def bench(size: str, path: Path, realcode: int, on_progress: Progress | None = None) -> list[Pair]:
    report = on_progress or (lambda _line: None)
    pairs: list[Pair] = []
    settings = Settings()
    with ExitStack() as stack:
        endpoint = stack.enter_context(start_local_endpoint(size, on_progress=report))
        model = ModelSettings.from_settings(settings, base_url=endpoint.base_url, model=endpoint.model,
                                            one_at_a_time=True, local=True)
        whole = Programmer(replace(model, fast_forward_echo=False))
        fast = Programmer(replace(model, fast_forward_echo=True))
        whole.complete([{"role": "user", "content": "Say hi."}])  # warm-up
        for name, capsule in capsules_for(path, realcode, stack):
            pairs.append(measure(whole, fast, capsule, name, settings))
            report(f"{size}: {len(pairs)} measured ({name})")
    return pairs


def format_table(size: str, pairs: Sequence[Pair]) -> str:
    header = (f"{'answer':<16} {'s / answer':>11} {'x whole':>8} {'tokens written':>15} {'x whole':>8} "
              f"{'same':>9}")
    lines = [header, "-" * len(header)]
    base = statistics.median(p.written_whole.seconds for p in pairs)
    base_written = statistics.median(p.written_whole.written for p in pairs)
    same = sum(p.written_whole.text == p.given_the_head.text for p in pairs)
    for label, answers in (("written whole", [p.written_whole for p in pairs]),
                           ("head given", [p.given_the_head for p in pairs])):
        seconds = statistics.median(a.seconds for a in answers)
        written = statistics.median(a.written for a in answers)
        lines.append(f"{label:<16} {seconds:>11.2f} {seconds / base:>8.2f} {written:>15.0f} "
                     f"{written / max(base_written, 1):>8.2f} "
                     f"{f'{same} of {len(pairs)}' if label == 'head given' else '-':>9}")
    given = [p for p in pairs if p.given]
    lines.append(f"{size}: medians over {len(pairs)} first requests (greedy); {len(given)} repeated enough "
                 "of the head to be given its rest; 'same': byte for byte the answer written whole")
    if given:
        ratio = statistics.median(p.given_the_head.seconds / p.written_whole.seconds for p in given)
        lines.append(f"those {len(given)}: median time ratio {ratio:.2f}")
    lines.append("")
    lines.append(f"{'task':<58} {'given':>5} {'s whole':>8} {'s given':>8} {'tok whole':>10} "
                 f"{'tok given':>10} same")
    for p in pairs:
        whole, fast = p.written_whole, p.given_the_head
        lines.append(f"{p.name[:58]:<58} {'yes' if p.given else 'no':>5} {whole.seconds:>8.1f} "
                     f"{fast.seconds:>8.1f} {whole.written:>10} {fast.written:>10} "
                     f"{'yes' if whole.text == fast.text else 'no'}")
    return "\n".join(lines)


add_arguments = prompt_cache.add_arguments


def run(args: argparse.Namespace) -> int:
    return prompt_cache.run_prompts("echo", bench, format_table, args)
