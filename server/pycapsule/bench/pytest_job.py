"""A sandbox job that runs a library's own tests with pytest on a source tree, and fails when any fails.

The tree is the job's project root (mounted read-only): pytest runs without its cache
(`-p no:cacheprovider`; the sandbox's worker writes no bytecode) and without plugins auto-loaded from
wherever the sandbox's Python lives, so the score depends only on pytest and the tree. The job raises
an AssertionError naming the first failing test, so `scorer.judge` reads it like any hidden test.
"""

from __future__ import annotations

from pathlib import Path

from pycapsule.sandbox.api import Job

_DRIVER = '''\
import os
import sys

FILE, TESTS, ARGS = {file!r}, {tests!r}, {args!r}
# The tree's path inside the sandbox (a backend may mount it elsewhere): the sys.path entry holding FILE.
ROOT = next((p for p in sys.path if os.path.isfile(os.path.join(p, FILE))), None)
if ROOT is None:
    raise RuntimeError("the library's source tree is not visible in the sandbox")
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
import pytest


def crash(report):
    found = getattr(report.longrepr, "reprcrash", None)
    if found is not None:
        return found.message
    lines = str(report.longrepr or report.outcome).strip().splitlines()
    return lines[-1] if lines else report.outcome


class Outcomes:
    def __init__(self):
        self.passed, self.failed = 0, []

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.append((report.nodeid, crash(report)))
        elif report.passed and report.when == "call":
            self.passed += 1

    def pytest_collectreport(self, report):
        if report.failed:
            self.failed.append((report.nodeid or "collecting", crash(report)))


outcomes = Outcomes()
code = pytest.main([*(os.path.join(ROOT, test) for test in TESTS), "-p", "no:cacheprovider", "-q",
                    "--tb=short", "--rootdir", ROOT, *ARGS], plugins=[outcomes])
if outcomes.failed:
    test, message = outcomes.failed[0]
    raise AssertionError(f"{{len(outcomes.failed)}} hidden test(s) failed, {{outcomes.passed}} passed; "
                         f"first: {{test}}: {{' '.join(str(message).split())}}")
if code != 0 or not outcomes.passed:
    raise AssertionError(f"pytest ended with exit code {{int(code)}} after {{outcomes.passed}} passing tests")
'''


def pytest_program(file: str, tests: tuple[str, ...], args: tuple[str, ...] = ()) -> str:
    """The job's source: run `tests` (node ids relative to the tree holding `file`) with pytest."""
    return _DRIVER.format(file=file, tests=list(tests), args=list(args))


def pytest_job(tree: Path, file: str, tests: tuple[str, ...], args: tuple[str, ...], timeout: float) -> Job:
    return Job(
        source=pytest_program(file, tests, args),
        filename="hidden_tests.py",
        doctest_targets=(),
        timeout=timeout,
        output_limit=16 * 1024,
        project_root=tree,
    )
