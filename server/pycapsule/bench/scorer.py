"""Scoring: a candidate module plus the task's hidden tests, run once in the sandbox.

The hidden tests raise on a wrong answer, so the job is run with no doctests and judged by its
status: `ok` passes, anything else fails, except failures that are not the model's (a library the
task needs is missing here, the sandbox itself broke), which are "unscorable" and left out of pass@1.
"""

from __future__ import annotations

from dataclasses import dataclass
from threading import Event
from typing import Literal

from pycapsule.bench.tasks import BenchTask
from pycapsule.sandbox.api import Job, RunResult, Sandbox

ScoreStatus = Literal["passed", "failed", "unscorable", "cancelled"]
"""cancelled: the run stopped while the tests ran; the task is left for a resume, never recorded."""
_SEPARATOR = "\n\n# ---- hidden tests (added by pycapsule bench after generation) ----\n"


@dataclass(frozen=True)
class Score:
    status: ScoreStatus
    detail: str
    """One line: why it failed or could not be scored ('' when passed)."""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def test_program(task: BenchTask, candidate: str) -> str:
    """The module the scorer runs: the candidate, then the hidden tests."""
    return candidate.rstrip("\n") + _SEPARATOR + task.hidden_test


def _missing_library(result: RunResult, task: BenchTask) -> str | None:
    error = result.module_error
    if error is None or error.type not in ("ModuleNotFoundError", "ImportError"):
        return None
    for library in task.libs:
        if f"'{library}'" in error.message or f"'{library}." in error.message:
            return library
    return None


def judge(result: RunResult, task: BenchTask) -> Score:
    """A hidden-test run's result as a score."""
    if result.status == "ok":
        return Score("passed", "", result.duration)
    if result.status == "cancelled":
        return Score("cancelled", result.detail, result.duration)
    if result.status == "crashed":
        return Score("unscorable", f"the sandbox failed: {result.detail}", result.duration)
    if (library := _missing_library(result, task)) is not None:
        return Score("unscorable", f"needs {library}, which is not installed where the sandbox runs",
                     result.duration)
    if result.status == "error" and result.module_error is not None:
        error = result.module_error
        message = " ".join(error.message.split())[:300]
        return Score("failed", f"{error.type}: {message}" if message else error.type, result.duration)
    return Score("failed", result.detail or result.status, result.duration)


def score(sandbox: Sandbox, task: BenchTask, candidate: str | None, cancel: Event | None = None) -> Score:
    """Run the hidden tests against `candidate` (a whole module); None means the model gave no code."""
    if candidate is None:
        return Score("failed", "no code to score")
    job = Job(
        source=test_program(task, candidate),
        filename=f"{task.entry_point}.py",
        doctest_targets=(),
        timeout=task.timeout,
        output_limit=16 * 1024,
    )
    return judge(sandbox.run(job, cancel), task)


_FIND_MISSING = """
import importlib.util
for name in {names!r}:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        print(name)
"""


def missing_libraries(sandbox: Sandbox, libraries: set[str]) -> set[str]:
    """The libraries among `libraries` that code in the sandbox cannot import."""
    if not libraries:
        return set()
    result = sandbox.run(Job(source=_FIND_MISSING.format(names=sorted(libraries)), doctest_targets=()))
    if result.status != "ok":
        return set(libraries)
    return set(result.stdout.split()) & set(libraries)
