"""Fixtures of the bench tests: the datasets (skipped with a reason where absent) and a warm sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.tasks import BenchTask, DatasetError
from pycapsule.sandbox.api import Sandbox, SandboxUnavailable


def tasks_of(dataset: str) -> list[BenchTask]:
    try:
        return load_tasks(dataset)[1]
    except DatasetError as error:
        pytest.skip(f"{dataset} data not available here: {error}")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    from pycapsule.sandbox.select import open_sandbox

    try:
        box = open_sandbox(None)
    except SandboxUnavailable as error:
        pytest.skip(f"no sandbox backend works here: {error}")
    yield box
    box.close()
