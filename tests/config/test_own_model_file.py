"""`embedded_model_file`: the absolute path of a GGUF file of your own, run as the embedded model (issue 68
item 3). It names a file loaded into a process of yours, so only you set it (your config file, the
environment, the command line, your editor's user settings), never a project's pyproject.toml; `pycapsule
config` shows it, where it was set, and that the model answering is your own file."""

from __future__ import annotations

import json
from pathlib import Path

from pycapsule.config import USER_ONLY_KEYS, load_settings

from tests.config.test_cli import pycapsule


def test_config_shows_your_own_model_file_and_where_it_was_set(tmp_path: Path,
                                                               clean_env: dict[str, str]) -> None:
    mine = tmp_path / "Qwen2.5-Coder-3B-Instruct-Q8_0.gguf"
    environ = {**clean_env, "PYCAPSULE_EMBEDDED_MODEL_FILE": str(mine)}
    done = pycapsule("config", str(tmp_path), "--json", env=environ)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    shown = doc["settings"]["embedded_model_file"]
    assert (shown["value"], shown["source"]) == (str(mine), "$PYCAPSULE_EMBEDDED_MODEL_FILE")
    assert shown["user_only"]
    assert doc["endpoint"] == f"embedded qwen2.5-coder-3b-instruct-q8_0 (your own file {mine})"
    assert doc["warnings"] == []

    user_file = Path(clean_env["PYCAPSULE_CONFIG"])
    user_file.write_text(f'embedded_model_file = "{mine}"\n')
    text = pycapsule("config", str(tmp_path), env=clean_env).stdout
    [row] = [line.split() for line in text.splitlines() if line.startswith("embedded_model_file")]
    assert row == ["embedded_model_file", str(mine), str(user_file)]
    assert f"model endpoint:   embedded qwen2.5-coder-3b-instruct-q8_0 (your own file {mine})" in text


def test_a_projects_pyproject_cannot_choose_the_model_file(tmp_path: Path) -> None:
    assert "embedded_model_file" in USER_ONLY_KEYS
    (tmp_path / "pyproject.toml").write_text('[tool.pycapsule]\nembedded_model_file = "/tmp/evil.gguf"\n')
    loaded = load_settings(tmp_path, None, {})
    assert loaded.settings.embedded_model_file is None
    assert loaded.warnings == [
        f"Setting 'embedded_model_file' in {tmp_path / 'pyproject.toml'} is ignored: a project may not "
        f"choose a file for your model server to load; set it in your own configuration ({loaded.user_file}, "
        "the environment, the command line or your editor's user settings)."]
    mine = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_FILE": "/models/mine.gguf"})
    assert (mine.settings.embedded_model_file, mine.sources["embedded_model_file"]) == (
        "/models/mine.gguf", "$PYCAPSULE_EMBEDDED_MODEL_FILE")


def test_a_relative_path_is_one_warning_and_the_catalog_model(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_FILE": "models/mine.gguf"})
    assert loaded.settings.embedded_model_file is None
    assert loaded.warnings == ["Setting 'embedded_model_file' = 'models/mine.gguf' from "
                               "$PYCAPSULE_EMBEDDED_MODEL_FILE is invalid (it must be the absolute path of a "
                               "GGUF file); using the default none (the catalog's model of "
                               "embedded_model_size)."]
