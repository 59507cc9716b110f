"""Fixtures of the engine tests: the scripted model server, a private history database and a warm
sandbox a test module shares."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.select import open_sandbox

from tests.fakes.openai_server import openai_server  # noqa: F401 (a fixture)

FAKE_KEY = "sk-fake-0123456789-do-not-leak"


@pytest.fixture(autouse=True)
def private_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test writes its own history, never the user's cache."""
    path = tmp_path / "history.sqlite3"
    monkeypatch.setenv("PYCAPSULE_HISTORY", str(path))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYCAPSULE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """The default sandbox, started once for the test module."""
    box = open_sandbox(None)
    yield box
    box.close()
