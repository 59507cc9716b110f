"""The engine's process's engines (`engine_pool`): one per project root for its settings, shared by the root's
runs and doctest checks; a settings change replaces it, and the replaced one is closed after its last user."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pycapsule.config import Settings
from pycapsule.lsp.engine_pool import EnginePool


class FakeEngine:
    made: list[FakeEngine] = []

    def __init__(self, settings: Settings, *, project_root: Path | None = None, history: Any = None) -> None:
        self.settings, self.project_root, self.history = settings, project_root, history
        self.closed = threading.Event()
        FakeEngine.made.append(self)

    def close(self) -> None:
        self.closed.set()


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> EnginePool:
    import pycapsule.engine

    monkeypatch.setattr(pycapsule.engine, "Engine", FakeEngine)
    monkeypatch.setenv("PYCAPSULE_HISTORY", str(tmp_path / "history.sqlite3"))
    FakeEngine.made = []
    return EnginePool()


def test_a_roots_users_share_one_engine_and_the_roots_one_history(pool: EnginePool, tmp_path: Path):
    settings = Settings()
    run, check = pool.acquire(settings, tmp_path / "a"), pool.acquire(settings, tmp_path / "a")
    other = pool.acquire(settings, tmp_path / "b")

    assert run is check and other is not run
    assert run.history is not None and other.history is run.history, "one history handle for all engines"
    pool.close()
    assert run.closed.is_set() and other.closed.is_set()


def test_a_settings_change_replaces_the_engine_closed_after_its_last_user(pool: EnginePool, tmp_path: Path):
    root = tmp_path / "a"
    old = pool.acquire(Settings(), root)
    new = pool.acquire(Settings(max_attempts=5), root)

    assert new is not old
    assert not old.closed.is_set(), "a run still uses it"
    pool.release(old)
    assert old.closed.is_set()
    assert not new.closed.is_set()

    pool.release(new)
    # nobody uses `new` now: it is closed at once, on a thread of its own
    newest = pool.acquire(Settings(max_attempts=4), root)
    deadline = time.monotonic() + 5
    while not new.closed.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert new.closed.is_set() and not newest.closed.is_set()
    assert len(FakeEngine.made) == 3
