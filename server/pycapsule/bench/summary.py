"""Figures of one run, computed from its per-task records: what the report tables and plots show."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import mean, median
from typing import Any

from pycapsule.bench.lost_answers import LostAnswers, lost_answers
from pycapsule.bench.records import TaskRecord
from pycapsule.debugging.sandbox_lacks import HEADLINE_START


@dataclass(frozen=True)
class Diagnosis:
    """Evidence for what limits a run, from the per-task records."""

    hidden_failures: dict[str, int]
    """Failed tasks by what the hidden tests raised (AssertionError, NameError, timeout...)."""
    last_verdicts: dict[str, int]
    """Failed tasks by their last attempt's verdict on the prompt's examples."""
    retries: int
    """Attempts after the first."""
    repeated: int
    """Of those, attempts whose code was exactly an earlier attempt's code for the same task."""
    gained_by_retry: int
    """Tasks that passed the hidden tests with the code of a later attempt."""


_NO_EXAMPLES = "no examples to run"


def _kind(text: str) -> str:
    """The category of a headline or failure detail: its words before the first ':' or digit."""
    if not text:
        return "passed"
    head = text.split(":")[0]
    for stop in (" at line", " after", " (", " ["):
        head = head.split(stop)[0]
    return head.strip() or "?"


def _last_attempt(record: TaskRecord) -> str:
    """The category of the last attempt's verdict on the examples, in the words of the examples column."""
    if not record.headlines:
        return "no attempt"
    # An attempt on a function without examples records its bare verdict as its headline.
    return _NO_EXAMPLES if record.headlines[-1] == "not_verified" else _kind(record.headlines[-1])


def diagnose(records: list[TaskRecord]) -> Diagnosis:
    failed = [r for r in records if r.status == "failed"]
    repeated = sum(1 for r in records for index, code in enumerate(r.codes) if code in r.codes[:index])
    return Diagnosis(
        hidden_failures=dict(Counter(_kind(r.detail) for r in failed).most_common()),
        last_verdicts=dict(Counter(_last_attempt(r) for r in failed).most_common()),
        retries=sum(max(0, len(r.codes) - 1) for r in records),
        repeated=repeated,
        gained_by_retry=sum(1 for r in records if r.passed and r.attempts > 1),
    )


@dataclass(frozen=True)
class RunSummary:
    dataset: str
    mode: str
    model: str
    max_attempts: int
    total_tasks: int
    """Tasks the run was asked for (the dataset, or --limit)."""
    done: int
    scored: int
    passed: int
    unscorable: int
    reused: int
    attempts_of_passed: dict[int, int]
    """How many tasks passed the hidden tests with the code of attempt k."""
    visible_vs_hidden: dict[str, int]
    mean_attempts: float
    mean_prompt_tokens: float
    mean_completion_tokens: float
    mean_task_seconds: float
    wall_seconds: float
    manifest: dict[str, Any]
    diagnosis: Diagnosis
    model_calls_by_task: dict[str, int]
    """Model calls of each scored task (its keys are the scored tasks)."""
    passed_ids: frozenset[str]
    seconds_to_examples_pass: tuple[float, ...] = ()
    """Per task whose outcome is 'passed' or 'passed_loosely' (its examples pass): seconds from the request to
    the loop's end."""
    seconds_to_hidden_pass: tuple[float, ...] = ()
    """The same for the tasks among them that passed the hidden tests too."""
    called_passed: int = 0
    """Scored tasks whose outcome pycapsule called passed (its examples and visible tests pass)."""
    called_passed_right: int = 0
    """Of those, the ones that pass the hidden tests too."""
    called_loosely: int = 0
    """Scored tasks called passed_loosely (their examples pass, but do not pin the body down)."""
    called_loosely_right: int = 0
    lost: LostAnswers = field(default_factory=LostAnswers)
    """Answers that yielded no usable function, and whose loss each was (bench/lost_answers.py)."""

    @property
    def precision(self) -> float | None:
        """The precision of "passed": the share of the bodies called passed that pass the hidden tests."""
        return 100.0 * self.called_passed_right / self.called_passed if self.called_passed else None

    @property
    def pass_at_1(self) -> float:
        return 100.0 * self.passed / self.scored if self.scored else 0.0

    @property
    def scored_ids(self) -> frozenset[str]:
        return frozenset(self.model_calls_by_task)

    @property
    def mean_model_calls(self) -> float:
        return self.mean_model_calls_over(self.scored_ids)

    def mean_model_calls_over(self, task_ids: frozenset[str]) -> float:
        """Model calls per task over some of the scored tasks (those another run has scored too)."""
        calls = [self.model_calls_by_task[task_id] for task_id in task_ids & self.scored_ids]
        return mean(calls) if calls else 0.0

    @property
    def median_seconds_to_examples_pass(self) -> float | None:
        return median(self.seconds_to_examples_pass) if self.seconds_to_examples_pass else None

    @property
    def median_seconds_to_hidden_pass(self) -> float | None:
        return median(self.seconds_to_hidden_pass) if self.seconds_to_hidden_pass else None

    @property
    def label(self) -> str:
        """The mode with the loop settings that tell self-debugging runs apart."""
        if self.mode != "selfdebug":
            return self.mode
        restart_after = self.manifest.get("config", {}).get("generation", {}).get("restart_after", "?")
        if restart_after == 0:
            return f"selfdebug ≤{self.max_attempts}, restarts only"
        fixes = "fix" if restart_after == 1 else "fixes"
        return f"selfdebug ≤{self.max_attempts}, restart after {restart_after} {fixes}"

    @property
    def complete(self) -> bool:
        return self.done >= self.total_tasks


def _visible(record: TaskRecord) -> str:
    if record.outcome == "passed":
        return "examples passed"
    if record.outcome == "passed_loosely":
        return "examples passed loosely"
    if record.outcome == "not_verified":
        cannot_run = record.headlines and record.headlines[-1].startswith(HEADLINE_START)
        return "examples cannot run here" if cannot_run else _NO_EXAMPLES
    return "examples failed"


def summarize(manifest: dict[str, Any], records: dict[str, TaskRecord]) -> RunSummary:
    config = manifest.get("config", {})
    generation = config.get("generation", {})
    done = list(records.values())
    scored = [r for r in done if r.status != "unscorable"]
    passed = [r for r in scored if r.passed]
    examples_passed = [r for r in scored if r.outcome == "passed"]
    loosely = [r for r in scored if r.outcome == "passed_loosely"]
    contingency = Counter(f"{_visible(r)}, hidden {'passed' if r.passed else 'failed'}" for r in scored)

    def average(values: list[float]) -> float:
        return mean(values) if values else 0.0

    return RunSummary(
        dataset=config.get("dataset", "?"),
        mode=generation.get("mode", "?"),
        model=manifest.get("model_label", "?"),
        max_attempts=int(generation.get("max_attempts", 1)),
        total_tasks=int(manifest.get("total_tasks", len(done))),
        done=len(done),
        scored=len(scored),
        passed=len(passed),
        unscorable=len(done) - len(scored),
        reused=sum(1 for r in done if r.reused_from),
        attempts_of_passed=dict(sorted(Counter(max(1, r.attempts) for r in passed).items())),
        visible_vs_hidden=dict(sorted(contingency.items())),
        mean_attempts=average([r.attempts for r in scored]),
        mean_prompt_tokens=average([r.prompt_tokens for r in scored]),
        mean_completion_tokens=average([r.completion_tokens for r in scored]),
        mean_task_seconds=average([r.generation_seconds + r.score_seconds for r in scored]),
        wall_seconds=float(manifest.get("wall_seconds", 0.0)),
        manifest=manifest,
        diagnosis=diagnose(scored),
        model_calls_by_task={r.task_id: r.model_calls for r in scored},
        passed_ids=frozenset(r.task_id for r in passed),
        seconds_to_examples_pass=tuple(r.generation_seconds for r in examples_passed + loosely),
        seconds_to_hidden_pass=tuple(r.generation_seconds for r in examples_passed + loosely if r.passed),
        called_passed=len(examples_passed),
        called_passed_right=sum(1 for r in examples_passed if r.passed),
        called_loosely=len(loosely),
        called_loosely_right=sum(1 for r in loosely if r.passed),
        lost=lost_answers(done),
    )
