"""Fixtures of the project tests: the scripted model server, and editors on a project folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import EDITORS, Editor, server_env, start_editor, stop_editor


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the editor opens; each test builds its project in it before opening files."""
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture(params=EDITORS)
async def editor(
    request: pytest.FixtureRequest, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> AsyncIterator[Editor]:
    editor = await start_editor(request.param, workspace, server_env(fake.base_url, tmp_path), TEST_OPTIONS)
    try:
        yield editor
    finally:
        await stop_editor(editor)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder, readable by others (pytest's tmp_path is not: the sandbox's uid could not
    import from it)."""
    root = tmp_path / "project"
    root.mkdir(mode=0o755)
    return root
