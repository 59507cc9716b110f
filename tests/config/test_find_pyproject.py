"""The project's pyproject.toml is the nearest one at or above the file (or folder), found through the real
path, so a file reached by a symlinked folder belongs to the project it really lives in."""

from __future__ import annotations

from pathlib import Path

from pycapsule.config import find_pyproject


def test_the_nearest_pyproject_at_or_above_a_file_or_a_folder(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "pkg" / "sub"
    inner.mkdir(parents=True)
    (outer / "pyproject.toml").write_text("")
    module = inner / "mod.py"
    module.write_text("")
    assert find_pyproject(module) == outer / "pyproject.toml"
    assert find_pyproject(inner) == outer / "pyproject.toml"
    (inner / "pyproject.toml").write_text("")  # a nearer one, added later, wins at once
    assert find_pyproject(module) == inner / "pyproject.toml"
    assert find_pyproject(outer) == outer / "pyproject.toml"


def test_a_folder_named_pyproject_toml_is_not_a_pyproject(tmp_path: Path) -> None:
    (tmp_path / "a" / "pyproject.toml").mkdir(parents=True)
    assert find_pyproject(tmp_path / "a" / "mod.py") != tmp_path / "a" / "pyproject.toml"


def test_a_symlinked_folder_belongs_to_the_project_it_really_lives_in(tmp_path: Path) -> None:
    real, elsewhere = tmp_path / "real" / "src", tmp_path / "elsewhere"
    real.mkdir(parents=True)
    elsewhere.mkdir()
    (tmp_path / "real" / "pyproject.toml").write_text("")
    (elsewhere / "pyproject.toml").write_text("")
    (elsewhere / "link").symlink_to(real, target_is_directory=True)
    (real / "mod.py").write_text("")
    assert find_pyproject(elsewhere / "link" / "mod.py") == tmp_path / "real" / "pyproject.toml"


def test_no_start_no_pyproject() -> None:
    assert find_pyproject(None) is None
