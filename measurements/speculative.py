"""Speculative decoding for the embedded model: faster answers, and are the greedy answers the same?

Issue 16's item 4. The model re-writes the function's signature and docstring in every answer, so tokens
drafted from n-grams already in the context ("ngram": llama.cpp's prompt lookup) could be accepted in runs;
or a smaller model of the same family drafts ("draft": the 0.5B for the 1.5B). For each configuration
("off" first, the baseline) the model is served with it, warmed up, and asked the product's own first
request (system and task messages, module context) for every stub of FILE (default examples/sample.py)
and, with --humaneval N, for the first N HumanEval prompts, greedy, prompt cache off. Printed per
configuration: the median seconds per answer, its ratio to "off", completion tokens/s, and how many answers
are byte for byte the baseline's: a configuration that changes greedy answers changes every published result.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openai import OpenAI
from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.workspace import PromptWorkspace
from pycapsule.capsule import Capsule
from pycapsule.commands.model import SIZES
from pycapsule.context import module_context
from pycapsule.embedded_model.catalog import spec_for
from pycapsule.embedded_model.errors import EmbeddedModelError
from pycapsule.embedded_model.install import install
from pycapsule.embedded_model.serve import ServerOptions, default_threads
from pycapsule.exit_codes import ExitCode
from pycapsule.prompts import generate_messages

from measurements.model import served_in_process
from measurements.progress import Progress, progress_for
from measurements.stubs import add_file_argument, stubs_of

CONFIGURATIONS = ("off", "ngram", "draft")
Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Answer:
    text: str
    seconds: float
    completion_tokens: int
    drafted: int = 0
    """Tokens drafted, and of them accepted: the server's own counts."""
    accepted: int = 0


@dataclass(frozen=True)
class ConfigurationResult:
    name: str
    answers: tuple[Answer, ...]

    @property
    def median_seconds(self) -> float:
        return statistics.median(a.seconds for a in self.answers)

    @property
    def tokens_per_second(self) -> float:
        return sum(a.completion_tokens for a in self.answers) / sum(a.seconds for a in self.answers)

    @property
    def drafted(self) -> int:
        return sum(a.drafted for a in self.answers)

    @property
    def accepted(self) -> int:
        return sum(a.accepted for a in self.answers)


def requests_for(path: Path, humaneval: int) -> list[Messages]:
    """The product's first request for every stub of `path`, then for the first `humaneval` HumanEval
    tasks."""
    capsules: list[Capsule] = stubs_of(path)
    if humaneval:
        capsules += [PromptWorkspace(task).capsule() for task in load_tasks("humaneval")[1][:humaneval]]
    return [generate_messages(capsule, module_context(capsule)) for capsule in capsules]  # type: ignore[misc]


def ask(client: OpenAI, model: str, messages: Messages, max_tokens: int) -> Answer:
    started = time.perf_counter()
    reply = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens,  # type: ignore[arg-type]
                                           temperature=0.0, extra_body={"cache_prompt": False})
    seconds, usage = time.perf_counter() - started, reply.usage
    timings = (reply.model_extra or {}).get("timings") or {}
    return Answer(reply.choices[0].message.content or "", seconds, usage.completion_tokens if usage else 0,
                  int(timings.get("draft_n", 0)), int(timings.get("draft_n_accepted", 0)))


def bench_configuration(size: str, name: str, requests: Sequence[Messages], max_tokens: int,
                        on_progress: Progress | None = None, draft_size: str = "0.5b") -> ConfigurationResult:
    report = on_progress or (lambda _line: None)
    spec = spec_for(size)
    draft = install(spec_for(draft_size), on_progress=report) if name == "draft" else None
    options = ServerOptions(install(spec, on_progress=report), spec.alias, threads=default_threads(),
                            speculative=name, draft_model=draft)  # type: ignore[arg-type]
    answers = []
    with served_in_process(options, timeout=900) as client:
        ask(client, spec.alias, requests[0], 16)  # warm-up
        for number, messages in enumerate(requests, start=1):
            answers.append(ask(client, spec.alias, messages, max_tokens))
            report(f"{size}, speculative {name}: {number} of {len(requests)} answered")
    return ConfigurationResult(name, tuple(answers))


def format_table(size: str, results: Sequence[ConfigurationResult], threads: int) -> str:
    baseline = results[0]
    header = (f"{'speculative':<12} {'s / answer':>10} {'x off':>6} {'tok/s':>7} {'drafted':>8} "
              f"{'accepted':>9} {'same answers':>13}")
    lines = [header, "-" * len(header)]
    for r in results:
        same = sum(a.text == b.text for a, b in zip(r.answers, baseline.answers, strict=True))
        ratio = r.median_seconds / baseline.median_seconds
        accepted = f"{100 * r.accepted / r.drafted:.0f} %" if r.drafted else "-"
        lines.append(f"{r.name:<12} {r.median_seconds:>10.2f} {ratio:>6.2f} {r.tokens_per_second:>7.1f} "
                     f"{r.drafted:>8} {accepted:>9} {f'{same} of {len(r.answers)}':>13}")
    lines.append(f"{size}: medians over {len(baseline.answers)} answers (greedy, prompt cache off), "
                 f"{threads} threads; 'same answers': byte for byte the answer without speculation")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_file_argument(parser)
    parser.add_argument("--size", choices=SIZES, default="1.5b", help="the model size (default: 1.5b)")
    parser.add_argument("--configuration", choices=CONFIGURATIONS[1:], action="append",
                        help="measured beside 'off'; repeat for several (default: ngram and draft)")
    parser.add_argument("--humaneval", type=int, default=0, metavar="N",
                        help="also the first N HumanEval prompts (the bench's dataset file)")
    parser.add_argument("--max-tokens", type=int, default=1024, help="per answer (default: 1024)")


def run(args: argparse.Namespace) -> int:
    progress = progress_for("speculative")
    try:
        requests = requests_for(args.file, args.humaneval)
    except (OSError, ValueError) as error:
        progress(f"cannot read the prompts: {error}")
        return ExitCode.USAGE
    if not requests:
        progress(f"{args.file} has no stubs to ask for")
        return ExitCode.USAGE
    names = ["off", *dict.fromkeys(args.configuration or CONFIGURATIONS[1:])]
    try:
        results = [bench_configuration(args.size, name, requests, args.max_tokens, on_progress=progress)
                   for name in names]
    except EmbeddedModelError as error:
        progress(str(error))
        return ExitCode.MODEL_UNAVAILABLE
    print(format_table(args.size, results, default_threads()))
    return 0
