"""Fixtures: a scripted OpenAI-compatible endpoint in this process and `pycapsule serve` in a
subprocess, driven with the client capabilities of VS Code and of Neovim."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.editor import EDITORS, Editor, server_env, start_editor, stop_editor

# Fast, deterministic model settings for tests: no retry waits.
TEST_OPTIONS = {"pycapsule": {"modelRetries": 0, "retryBackoff": 0, "requestTimeout": 30}}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n', encoding="utf-8")
    return root


@pytest.fixture(params=EDITORS)
async def editor(
    request: pytest.FixtureRequest, fake: FakeOpenAI, project: Path, tmp_path: Path
) -> AsyncIterator[Editor]:
    editor = await start_editor(request.param, project, server_env(fake.base_url, tmp_path), TEST_OPTIONS)
    try:
        yield editor
    finally:
        await stop_editor(editor)
