"""Time to a passing body: every stub of a file generated as `pycapsule generate` does it (the Engine, the
sandbox, the model the settings name: the embedded one unless an endpoint is configured), once per
`answer_prefill` value per round, the values interleaved so that a busy machine slows them alike.

Each Engine starts its model before it is timed; a run is timed from the request to generate to its end
(the import check, every attempt, the doctests). Printed per value: the median seconds to a passing body
(of the runs that passed), the median seconds of every run, passes, the median completion tokens per
run, and the ratio of its median to the first value's (the baseline).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from pycapsule.capsule import CapsuleError
from pycapsule.config import Settings, load_settings
from pycapsule.engine import Engine
from pycapsule.events import Finished
from pycapsule.exit_codes import ExitCode
from pycapsule.history import History
from pycapsule.model_client import ModelError
from pycapsule.sandbox.api import SandboxUnavailable

from measurements.progress import progress_for
from measurements.stubs import add_file_argument, stubs_of

PREFILLS: tuple[str, ...] = get_args(Settings.model_fields["answer_prefill"].annotation)
_UNAVAILABLE = {"model": ExitCode.MODEL_UNAVAILABLE, "sandbox": ExitCode.SANDBOX_UNAVAILABLE}


@dataclass(frozen=True)
class Run:
    function: str
    seconds: float
    passed: bool
    completion_tokens: int


def _figures(runs: Sequence[Run]) -> tuple[float | None, float, int, float]:
    passing = [r.seconds for r in runs if r.passed]
    return (statistics.median(passing) if passing else None, statistics.median(r.seconds for r in runs),
            sum(r.passed for r in runs), statistics.median(r.completion_tokens for r in runs))


def format_table(results: dict[str, list[Run]], model: str, rounds: int) -> str:
    header = (f"{'answer_prefill':<15} {'to passing s':>12} {'all runs s':>11} {'passed':>8} "
              f"{'tokens':>7} {'x baseline':>11}")
    lines = [header, "-" * len(header)]
    baseline: float | None = None
    for value, runs in results.items():
        passing, every, passed, tokens = _figures(runs)
        baseline = passing if baseline is None else baseline
        ratio = f"{passing / baseline:.2f}" if passing and baseline else "-"
        shown = f"{passing:.1f}" if passing is not None else "-"
        lines.append(f"{value:<15} {shown:>12} {every:>11.1f} {passed:>4}/{len(runs):<3} {tokens:>7.0f} "
                     f"{ratio:>11}")
    functions = len({r.function for runs in results.values() for r in runs})
    lines.append(f"medians over {rounds} round(s) of {functions} function(s) with {model}; tokens: "
                 "completion tokens per run; x baseline: median seconds to a passing body against the first "
                 "row's")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_file_argument(parser)
    parser.add_argument("--prefill", choices=PREFILLS, action="append",
                        help="an answer_prefill value to time, the first is the baseline; repeat for several "
                             "(default: never, then embedded, or always with an endpoint)")
    parser.add_argument("--rounds", type=int, default=3, help="times each function is generated per value")


def run(args: argparse.Namespace) -> int:
    progress = progress_for("generate")
    path: Path = args.file.resolve()
    try:
        stubs = stubs_of(path)
    except (OSError, CapsuleError) as error:
        progress(f"cannot read {args.file}: {error}")
        return ExitCode.USAGE
    if not stubs or args.rounds < 1:
        progress(f"{args.file} has no stub function to generate" if not stubs else "--rounds must be >= 1")
        return ExitCode.USAGE
    settings = load_settings(path.parent).settings
    prefills = args.prefill or ["never", "embedded" if settings.uses_embedded_model else "always"]
    results: dict[str, list[Run]] = {value: [] for value in prefills}
    with tempfile.TemporaryDirectory() as scratch:
        history = History(Path(scratch) / "history.sqlite3")  # not the user's: rounds would change its seeds
        engines = {value: Engine(settings.model_copy(update={"answer_prefill": value}),
                                 history=history) for value in prefills}
        try:
            for value, engine in engines.items():
                engine.sandbox()
                model = engine.programmer().who.removeprefix("the ")
                progress(f"{value}: {model} and the sandbox are ready")
            for number in range(1, args.rounds + 1):
                for value, engine in engines.items():
                    for capsule in stubs:
                        started = time.perf_counter()
                        *_, end = engine.generate(capsule)
                        assert isinstance(end, Finished)
                        outcome = end.outcome
                        if outcome.unavailable is not None:
                            progress(outcome.message)
                            return _UNAVAILABLE[outcome.unavailable]
                        seconds = time.perf_counter() - started
                        results[value].append(Run(capsule.qualname, seconds, outcome.status == "passed",
                                                  outcome.usage.completion_tokens))
                        progress(f"round {number}, {value}: {capsule.qualname} {outcome.status} "
                                 f"({results[value][-1].seconds:.1f} s)")
        except (ModelError, SandboxUnavailable) as error:
            progress(str(error))
            return _UNAVAILABLE["model" if isinstance(error, ModelError) else "sandbox"]
        finally:
            for engine in engines.values():
                engine.close()
            history.close()
    print(format_table(results, model, args.rounds))
    return 0
