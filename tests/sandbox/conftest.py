"""Sandboxes for the tests: one warm sandbox per backend per session.

A backend that cannot run here is skipped with its reason on a developer machine, and FAILS in CI
(CI=true), where every backend must work.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pycapsule.sandbox.api import Job, RunResult, Sandbox, SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox

CONTAINED = ["bwrap", pytest.param("docker", marks=pytest.mark.docker)]
EVERY_BACKEND = [*CONTAINED, "unsafe-subprocess"]

TRIVIAL = '''
def one():
    """
    >>> one()
    1
    """
    return 1
'''


def trivial_job_passes(sandbox: Sandbox) -> RunResult:
    return sandbox.run(Job(source=TRIVIAL, doctest_targets=("one",), timeout=20))


def open_or_skip(name: str) -> Sandbox:
    try:
        return open_sandbox(name)
    except SandboxUnavailable as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} must work in CI: {error}")
        pytest.skip(f"{name} cannot run here: {error}")


@pytest.fixture(scope="session")
def sandboxes() -> Iterator[dict[str, Sandbox]]:
    opened: dict[str, Sandbox] = {}
    yield opened
    for sandbox in opened.values():
        sandbox.close()


@pytest.fixture
def sandbox(request: pytest.FixtureRequest, sandboxes: dict[str, Sandbox]) -> Iterator[Sandbox]:
    """The warm sandbox of the parametrized backend; after the test it must still run a job."""
    name = request.param
    if name not in sandboxes:
        sandboxes[name] = open_or_skip(name)
    yield sandboxes[name]
    after = trivial_job_passes(sandboxes[name])
    assert after.passed, f"the {name} sandbox did not recover: {after.status} {after.detail}"


def run(sandbox: Sandbox, source: str, **job: object) -> RunResult:
    job.setdefault("timeout", 10.0)
    return sandbox.run(Job(source=source, **job))  # type: ignore[arg-type]
