"""Fixtures of the project tests: an empty project folder; the scripted model server (`fake`) and the
editors of the language server tests, opened on it: `editor` with VS Code's capabilities, `each_editor` with
VS Code's and then Neovim's, where the edit's shape differs between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp.conftest import endpoint, fake  # noqa: F401 (fixtures)
from tests.lsp.conftest import project_each_editor as each_editor  # noqa: F401 (each profile, on `project`)
from tests.lsp.conftest import project_editor as editor  # noqa: F401 (a server of its own on `project` below)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder, readable by others (pytest's tmp_path is not: the sandbox's uid could not
    import from it). Each test builds its project in it."""
    root = tmp_path / "project"
    root.mkdir(mode=0o755)
    return root
