"""Scoring: a candidate module plus the task's hidden tests, run once in the sandbox.

The hidden tests raise on a wrong answer, so the job is run with no doctests and judged by its
status: `ok` passes, anything else fails, except failures that are not the model's (a library the
task needs is missing here, the sandbox itself broke), which are "unscorable" and left out of pass@1.
"""

from __future__ import annotations

import json
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


_LIBRARY_VERSIONS = """
import importlib.metadata, importlib.util, json, sys
distributions = importlib.metadata.packages_distributions()
found = {{}}
for name in {names!r}:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        found[name] = " ".join(sorted({{f"{{d}} {{importlib.metadata.version(d)}}"
                                        for d in distributions.get(name, ())}})) or "(no distribution)"
print(json.dumps({{"python": sys.version.split()[0], "libraries": found}}))
"""


@dataclass(frozen=True)
class SandboxLibraries:
    """What the sandbox's interpreter has of the libraries some tasks need."""

    python: str
    """Its version ('' when the sandbox could not say)."""
    installed: dict[str, str]
    """Importable module -> the distribution(s) and version(s) that provide it ('scikit-learn 1.3.1')."""
    missing: frozenset[str]


def sandbox_libraries(sandbox: Sandbox, libraries: set[str]) -> SandboxLibraries:
    """Which of `libraries` code in the sandbox can import, and from which distribution versions."""
    if not libraries:
        return SandboxLibraries("", {}, frozenset())
    result = sandbox.run(Job(source=_LIBRARY_VERSIONS.format(names=sorted(libraries)), doctest_targets=()))
    try:
        found = json.loads(result.stdout.strip().splitlines()[-1]) if result.status == "ok" else {}
    except (ValueError, IndexError):
        found = {}
    installed = {name: str(version) for name, version in found.get("libraries", {}).items()
                 if name in libraries}
    return SandboxLibraries(str(found.get("python", "")), installed, frozenset(libraries - installed.keys()))
