"""A first attempt's wait per prompt size: how much of it is reading the module's context, how much writing
the signature and docstring again?

Issue 48. On two CPU cores the embedded 1.5B model reads a prompt at ~40-70 tokens/s and writes at ~15-25,
so a first attempt on real code (a ~1,400-token prompt, the module's context most of it) is mostly reading.
For each stub of FILE (default examples/sample.py) and, with --realcode N, the first N realcode tasks, the
stub's first request is asked as the loop asks it (greedy, never from the prompt cache, through the
product's own client and the embedded model started as the CLI starts it) once per variant, the variants
one after the other for each stub, so a machine that slows down slows them alike. A variant is a
`context_chars` value and an `answer_prefill` value; the first is the baseline (by default the shipped
settings). Printed per variant: the median seconds to the first token (reading the prompt) and per answer,
the median prompt and completion tokens, the ratios of both medians to the baseline's, and how many answers
(a prefilled one with the start it was given) are byte for byte the baseline's (another prompt is another
answer: its pass@1 is measured by a bench run).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import get_args

from pycapsule.config import DEFAULTS, Settings
from pycapsule.context import module_context
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.loop import first_request
from pycapsule.model_client import ModelSettings, Programmer
from pycapsule.prompts import whole_answer

from measurements import prompt_cache
from measurements.progress import Progress
from measurements.prompt_cache import Retry, capsules_for, run_prompts, timed

PREFILLS: tuple[str, ...] = get_args(Settings.model_fields["answer_prefill"].annotation)


@dataclass(frozen=True)
class Variant:
    context_chars: int
    answer_prefill: str

    @classmethod
    def parse(cls, text: str) -> Variant:
        """`CHARS:PREFILL`, e.g. `2000:embedded`; ValueError (one sentence) otherwise."""
        chars, _, prefill = text.partition(":")
        if not chars.isdigit() or prefill not in PREFILLS:
            raise ValueError(f"{text!r} is not CHARS:PREFILL (PREFILL one of {', '.join(PREFILLS)})")
        return cls(int(chars), prefill)

    @property
    def name(self) -> str:
        return f"{self.context_chars}:{self.answer_prefill}"

    def settings(self) -> Settings:
        return DEFAULTS.model_copy(update={"context_chars": self.context_chars,
                                           "answer_prefill": self.answer_prefill})


SHIPPED = Variant(DEFAULTS.context_chars, DEFAULTS.answer_prefill)
DEFAULT_VARIANTS = (Variant(4000, "never"), Variant(2000, "embedded"))
"""Measured beside the baseline when no --variant is given: the context shown until issue 48, and the
body only."""


@dataclass(frozen=True)
class Stub:
    name: str
    answers: tuple[Retry, ...]
    """One per variant, in the variants' order."""


def bench(size: str, path: Path, realcode: int, variants: Sequence[Variant] | None = None,
          on_progress: Progress | None = None) -> list[Stub]:
    report = on_progress or (lambda _line: None)
    variants = variants or (SHIPPED, *DEFAULT_VARIANTS)
    stubs: list[Stub] = []
    with ExitStack() as stack:
        endpoint = stack.enter_context(start_local_endpoint(size, on_progress=report))
        model = ModelSettings.from_settings(DEFAULTS, base_url=endpoint.base_url, model=endpoint.model,
                                            one_at_a_time=True, local=True)
        programmer = Programmer(model)
        programmer.complete([{"role": "user", "content": "Say hi."}])  # warm-up
        for name, capsule in capsules_for(path, realcode, stack):
            answers = []
            for variant in variants:
                messages = first_request(capsule, programmer=programmer, settings=variant.settings(),
                                         context=module_context(capsule, variant.context_chars))
                answer = timed(programmer, messages, DEFAULTS.temperature)
                if messages[-1]["role"] == "assistant":  # prefilled: compare whole answers
                    answer = replace(answer, text=whole_answer(messages[-1]["content"], answer.text))
                answers.append(answer)
            stubs.append(Stub(name, tuple(answers)))
            report(f"{size}: {len(stubs)} measured ({name})")
    return stubs


def format_table(size: str, stubs: Sequence[Stub], variants: Sequence[Variant]) -> str:
    header = (f"{'variant':<16} {'s to 1st token':>15} {'x base':>7} {'s / answer':>11} {'x base':>7} "
              f"{'prompt tokens':>14} {'completion':>11} {'same answers':>13}")
    lines = [header, "-" * len(header)]
    columns = [[stub.answers[index] for stub in stubs] for index in range(len(variants))]
    base_first = statistics.median(a.first_token for a in columns[0])
    base = statistics.median(a.seconds for a in columns[0])
    for index, (variant, answers) in enumerate(zip(variants, columns, strict=True)):
        first = statistics.median(a.first_token for a in answers)
        seconds = statistics.median(a.seconds for a in answers)
        prompt = statistics.median(a.prompt_tokens for a in answers)
        written = statistics.median(a.completion_tokens for a in answers)
        same = sum(a.text == b.text for a, b in zip(answers, columns[0], strict=True))
        lines.append(f"{variant.name:<16} {first:>15.2f} {first / base_first:>7.2f} {seconds:>11.2f} "
                     f"{seconds / base:>7.2f} {prompt:>14.0f} {written:>11.0f} "
                     f"{f'{same} of {len(answers)}' if index else '-':>13}")
    lines.append(f"{size}: medians over {len(stubs)} first requests (greedy); variant: context_chars:"
                 "answer_prefill, the first the baseline; 'same answers': byte for byte the baseline's")
    lines.append("")
    lines.append(f"{'stub':<58} " + " ".join(f"{variant.name:>16}" for variant in variants))
    for stub in stubs:
        lines.append(f"{stub.name[:58]:<58} " + " ".join(
            f"{f'{a.first_token:.1f}+{a.seconds - a.first_token:.1f} s':>16}" for a in stub.answers))
    lines.append("per stub: seconds to the first token + seconds writing")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    prompt_cache.add_arguments(parser)
    parser.add_argument("--baseline", type=Variant.parse, default=SHIPPED, metavar="CHARS:PREFILL",
                        help=f"the variant the others are compared with (default: {SHIPPED.name}, shipped)")
    parser.add_argument("--variant", type=Variant.parse, action="append", metavar="CHARS:PREFILL",
                        help="a context_chars:answer_prefill pair measured beside the baseline; repeat for "
                             f"several (default: {', '.join(variant.name for variant in DEFAULT_VARIANTS)})")


def run(args: argparse.Namespace) -> int:
    variants = [args.baseline, *(args.variant or DEFAULT_VARIANTS)]
    return run_prompts(
        "prompt_size",
        lambda size, path, realcode, on_progress: bench(size, path, realcode, variants, on_progress),
        lambda size, stubs: format_table(size, stubs, variants), args)
