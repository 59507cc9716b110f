"""Fixtures of the engine tests: the scripted model server and a private history database."""

from __future__ import annotations

from pathlib import Path

import pytest

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
