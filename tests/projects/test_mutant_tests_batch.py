"""Several candidates, one tests job: `ProjectTests.run_many` starts the sandbox's Python and pytest once and
runs the project's selected tests against each candidate in a process of its own, so each gets the verdict
a job of its own would give it, and nothing one candidate does (hang, crash, change the interpreter, write
a report line) reaches another's. The mutants of a body that the project's tests judge run that way: one
job for all of them. The real sandbox, a real project with its own venv and pytest tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.interpreter import venv_python
from pycapsule.project import module_import
from pycapsule.project_tests import TestSelection
from pycapsule.sandbox.api import Job, RunResult, Sandbox
from pycapsule.sandbox.select import open_sandbox
from pycapsule.strength.check import Budget, measure_strength
from pycapsule.tests_job import ProjectTests

from tests.projects import builders

PYTEST_SITE = str(Path(pytest.__file__).resolve().parent.parent)
CLAMP_TESTS = ("tests/test_core.py::test_clamp_above", "tests/test_core.py::test_clamp_below",
               "tests/test_core.py::test_clamp_inside")
STUB = "def clamp(x, lo, hi):\n    \"\"\"Limit x to the range [lo, hi] (no example at all).\"\"\"\n    ...\n"
FILE = "tests/test_core.py"
FORGED = f"the project's tests ({FILE}) gave no report: the code under test wrote into the report channel"
PASSING = ('{"exit": 0, "passed": 3, "failed": 0, "skipped": 0, "failures": [], "failed_ids": [], '
           '"lines": [], "index": INDEX}')


class CountingSandbox:
    """The real sandbox, counting the jobs it runs."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner, self.name = inner, inner.name
        self.jobs: list[Job] = []

    def run(self, job: Job, cancel: threading.Event | None = None) -> RunResult:
        self.jobs.append(job)
        return self.inner.run(job, cancel)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture(scope="module")
def stats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of tests/projects/test_project_tests.py (`src/stats/core.py`, its venv, its tests),
    built once for the module: the tests here change no file of it."""
    root = tmp_path_factory.mktemp("batch") / "project"
    root.mkdir(mode=0o755)
    root.parent.chmod(0o755)
    return builders.project_with_tests_and_venv(root, PYTEST_SITE)


@pytest.fixture(scope="module")
def warm(stats: Path) -> Iterator[Sandbox]:
    """The default sandbox on the project, with the project's venv, started once for the module."""
    root = stats.parents[2]
    box = open_sandbox(None, root, str(venv_python(root / ".venv")))
    yield box
    box.close()


@pytest.fixture
def sandbox(warm: Sandbox) -> CountingSandbox:
    return CountingSandbox(warm)


@pytest.fixture
def tests(stats: Path) -> ProjectTests:
    """clamp's three tests (above, below and inside the bounds)."""
    return ProjectTests(module_import(stats, stats.parents[2]), TestSelection(CLAMP_TESTS),
                        "the project's venv", timeout=60.0)


def with_clamp(stats: Path, body: str) -> str:
    """The module with clamp's stub body replaced by `body` (indented lines)."""
    source = stats.read_text()
    assert "    ...\n" in source.split("def clamp", 1)[1]
    head, tail = source.split("def clamp", 1)
    return head + "def clamp" + tail.replace("    ...\n", body, 1)


RIGHT = "    return min(max(x, lo), hi)\n"
WRONG = "    return max(x, lo)\n"  # too big above the range: only test_clamp_above fails
NONE = "    return None\n"  # every test fails


def test_each_candidate_in_one_job_gets_its_own_verdict(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    right, wrong = with_clamp(stats, RIGHT), with_clamp(stats, WRONG)
    # replaces a builtin for the whole interpreter: in a shared process the next candidate would break
    meddling = with_clamp(stats, "    import builtins\n    builtins.min = lambda *args: 0\n" + RIGHT)

    runs = tests.run_many(sandbox, [right, wrong, meddling, right])

    assert len(sandbox.jobs) == 1, "one sandbox job for every candidate"
    assert [run.ok for run in runs] == [True, False, False, True]
    first, second, third, fourth = runs
    assert (first.passed, first.failed, first.problem) == (3, 0, None)
    assert second.failing() == {"tests/test_core.py::test_clamp_above"}
    assert second.failures[0].crash.startswith("assert 5 == 3")
    assert third.passed == 0, "its min (0 whatever it is given) broke its tests, and pytest with them"
    assert (fourth.passed, fourth.failed, fourth.problem) == (3, 0, None), "nothing of the third is left"
    line = right.splitlines().index(RIGHT.rstrip("\n")) + 1
    assert line in first.lines_run and line in fourth.lines_run


def test_each_candidate_fails_at_its_first_failing_test_unless_asked_for_all(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    none = with_clamp(stats, NONE)
    [stopped] = tests.run_many(sandbox, [none])
    [every] = tests.run_many(sandbox, [none], stop_at_first_failure=False)
    assert (stopped.failed, every.failed) == (1, 3)
    assert not stopped.ok and not every.ok


def test_a_candidate_that_hangs_or_crashes_fails_without_stopping_the_others(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    right = with_clamp(stats, RIGHT)
    hangs = with_clamp(stats, "    while True:\n        pass\n")
    crashes = with_clamp(stats, "    import os\n    os._exit(3)\n")
    started = time.monotonic()

    runs = tests.run_many(sandbox, [right, hangs, crashes, with_clamp(stats, WRONG), right], each_seconds=3.0)

    assert len(sandbox.jobs) == 1
    assert [run.ok for run in runs] == [True, False, False, False, True]
    assert runs[1].problem == ("the project's tests (tests/test_core.py) did not finish within the time "
                               "allowed (3.0 s)")
    assert runs[2].problem == ("the project's tests (tests/test_core.py) ended early: its process exited "
                               "with code 3 before its report")
    assert runs[3].problem is None and runs[3].failed == 1
    assert time.monotonic() - started < 60, "the hanging one was stopped after its own 3 s"


def test_a_candidate_that_hangs_is_stopped_at_a_few_times_the_first_ones_time_when_paced(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    right, hangs = with_clamp(stats, RIGHT), with_clamp(stats, "    while True:\n        pass\n")
    started = time.monotonic()
    runs = tests.run_many(sandbox, [right, hangs, right], pace=1.0)
    assert [run.ok for run in runs] == [True, False, True]
    assert runs[1].problem is not None and "did not finish within the time allowed" in runs[1].problem
    assert time.monotonic() - started < 40, "not the 60 s one run may take"


def test_a_candidate_that_writes_a_report_line_is_not_taken_as_passed_nor_reaches_another(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    """Each forger finds the job's secret mark (the driver is the sandbox's __main__) and writes a passing
    report line for its own index, or for the next candidate's, then returns a wrong value or exits."""
    def forger(index: int, then: str, into: str = "1") -> str:
        return with_clamp(stats, f"""    import os, sys
    main = sys.modules["__main__"]
    line = main.MARK + {PASSING!r}.replace("INDEX", "{index}") + "\\n"
    out = {into}
    os.write(out if isinstance(out, int) else os.open(out, os.O_WRONLY), line.encode())
{then}""")

    wrong = with_clamp(stats, WRONG)
    candidates = [
        forger(0, "    os._exit(0)\n"),  # its stdout: where the driver's report went, in a single run
        forger(1, WRONG),
        forger(3, RIGHT),  # for the next, which fails on its own
        wrong,
        # the job's report channel itself, through the parent's open file (where the sandbox does not refuse
        # that, as bwrap's does): a second line for its index
        forger(4, WRONG, into='f"/proc/{os.getppid()}/fd/{main.OUT}"'),
        with_clamp(stats, RIGHT),
    ]
    runs = tests.run_many(sandbox, candidates)
    assert len(sandbox.jobs) == 1
    assert [run.ok for run in runs] == [False, False, True, False, False, True]
    assert runs[0].problem == "the project's tests (tests/test_core.py) could not be run: they gave no report"
    assert runs[1].problem is None and runs[1].failed == 1
    assert runs[3].problem is None and runs[3].failing() == {"tests/test_core.py::test_clamp_above"}
    assert runs[4].problem in (None, FORGED), "refused by the sandbox (its own test fails), or no report"


def test_run_still_runs_one_candidate_in_a_job_of_its_own_with_the_same_verdicts(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    candidates = [with_clamp(stats, body) for body in (RIGHT, WRONG, NONE)]
    alone = [tests.run(sandbox, candidate) for candidate in candidates]
    assert len(sandbox.jobs) == 3
    together = tests.run_many(sandbox, candidates, stop_at_first_failure=False)
    assert len(sandbox.jobs) == 4
    for (run, result), batched in zip(alone, together, strict=True):
        assert result.status == "ok"
        assert (run.passed, run.failed, run.failed_ids, run.lines_run, run.problem) == \
            (batched.passed, batched.failed, batched.failed_ids, batched.lines_run, batched.problem)
    assert [run.ok for run, _ in alone] == [True, False, False]


def test_run_still_says_a_body_that_exits_after_printing_a_report_ended_early(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    exits = with_clamp(stats, f"""    import os, sys
    main = sys.modules["__main__"]
    os.write(1, (main.MARK + {PASSING!r}.replace(', "index": INDEX', "") + "\\n").encode())
    os._exit(0)
""")
    run, result = tests.run(sandbox, exits)
    assert result.status != "ok" and not run.ok
    assert run.problem is not None and run.problem.startswith(f"the project's tests ({FILE}) ended early")


def test_the_mutants_the_projects_tests_judge_run_in_one_job(
        stats: Path, sandbox: CountingSandbox, tests: ProjectTests) -> None:
    """clamp has no example: every mutant its tests reach is theirs to judge, all in one job."""
    source = with_clamp(stats, "    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n"
                               "    return x\n")
    capsule = capsule_by_qualname(source, "clamp", stats)
    [baseline] = tests.run_many(sandbox, [source])
    assert baseline.ok
    sandbox.jobs.clear()

    strength, _ = measure_strength(
        sandbox, capsule, source, examples=False, tests=tests, lines_run=baseline.lines_run, body_seconds=0.0,
        job_timeout=10.0, root=stats.parents[2], budget=Budget(seconds=60.0))

    assert len(sandbox.jobs) == 1
    assert not strength.capped and strength.run == strength.total > 10
    # at a bound, x and the bound are the same: only these changes survive (no test could catch them)
    survived = [survivor.change for survivor in strength.survivors]
    assert survived == ["`x < lo` -> `x <= lo`", "`x > hi` -> `x >= hi`"]
    assert strength.caught == strength.run - 2
