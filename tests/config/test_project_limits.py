"""A cloned project's `[tool.pycapsule]` may lower what a run spends of the user's money and time, never
raise it above the user's own value (their config file's, else the default), and never choose the model:
a raise is replaced by the user's value and an ignored key is dropped, each with one line naming the key,
the file and the value used; `pycapsule config` shows the value used and where it came from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.config import DEFAULTS, LIMIT_KEYS, Settings, load_settings

ABOVE_THE_DEFAULT = {
    "max_attempts": "50", "max_tokens": "1000000", "model_retries": "10", "history_window": "10",
    "request_timeout": "3600.0", "inactivity_timeout": "3600.0", "retry_backoff": "600.0",
    "retry_after_cap": "3600.0", "job_timeout": "600.0", "test_timeout": "1800.0",
}
BELOW_THE_DEFAULT = {
    "max_attempts": "1", "max_tokens": "512", "model_retries": "0", "history_window": "0",
    "request_timeout": "20.0", "inactivity_timeout": "5.0", "retry_backoff": "0.0",
    "retry_after_cap": "1.0", "job_timeout": "2.5", "test_timeout": "5.0",
}


def project(folder: Path, table: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pyproject = folder / "pyproject.toml"
    lines = "".join(f"{key} = {value}\n" for key, value in table.items())
    pyproject.write_text(f"[tool.pycapsule]\n{lines}")
    return pyproject


def value_of(key: str, text: str) -> object:
    return Settings.model_validate_strings({key: text}, strict=False).model_dump()[key]


def test_the_samples_cover_every_limit() -> None:
    assert set(ABOVE_THE_DEFAULT) == set(BELOW_THE_DEFAULT) == LIMIT_KEYS
    for key in LIMIT_KEYS:
        below, above = value_of(key, BELOW_THE_DEFAULT[key]), value_of(key, ABOVE_THE_DEFAULT[key])
        assert below < getattr(DEFAULTS, key) < above, key


def test_a_project_may_lower_every_limit(tmp_path: Path) -> None:
    pyproject = project(tmp_path, BELOW_THE_DEFAULT)
    loaded = load_settings(tmp_path, None, {})
    assert loaded.warnings == []
    for key, text in BELOW_THE_DEFAULT.items():
        assert getattr(loaded.settings, key) == value_of(key, text), key
        assert loaded.sources[key] == str(pyproject), key


@pytest.mark.parametrize("key", sorted(LIMIT_KEYS))
def test_a_project_cannot_raise_a_limit_above_the_default(tmp_path: Path, key: str) -> None:
    pyproject = project(tmp_path, {key: ABOVE_THE_DEFAULT[key]})
    loaded = load_settings(tmp_path, None, {})
    default = getattr(DEFAULTS, key)
    assert getattr(loaded.settings, key) == default and loaded.sources[key] == "default"
    [warning] = loaded.warnings
    asked = value_of(key, ABOVE_THE_DEFAULT[key])
    assert warning.startswith(f"Setting '{key}' = {asked!r} in {pyproject} is lowered to the default "
                              f"{default!r}: a project may lower a cost or time limit but never raise it")
    assert "\n" not in warning


def test_the_users_own_file_is_the_ceiling(tmp_path: Path) -> None:
    user_file = tmp_path / "user.toml"
    user_file.write_text("max_attempts = 10\njob_timeout = 30.0\n")
    pyproject = project(tmp_path / "repo", {"max_attempts": "50", "job_timeout": "20.0"})
    loaded = load_settings(tmp_path / "repo", None, {"PYCAPSULE_CONFIG": str(user_file)})
    assert (loaded.settings.max_attempts, loaded.sources["max_attempts"]) == (10, str(user_file))
    [warning] = loaded.warnings
    assert f"'max_attempts' = 50 in {pyproject} is lowered to 10 from {user_file}:" in warning
    assert (loaded.settings.job_timeout, loaded.sources["job_timeout"]) == (20.0, str(pyproject)), \
        "above the default, below the user's own: allowed"


def test_the_users_environment_command_line_and_editor_still_win(tmp_path: Path) -> None:
    project(tmp_path, {"max_attempts": "50", "job_timeout": "1.0"})
    from_env = load_settings(tmp_path, None, {"PYCAPSULE_MAX_ATTEMPTS": "20"})
    assert (from_env.settings.max_attempts, from_env.settings.job_timeout) == (20, 1.0)
    assert from_env.warnings == [], "the project's value is not used, so nothing was lowered"
    from_flag = load_settings(tmp_path, {"max_attempts": 7, "job_timeout": 30.0}, {})
    assert (from_flag.settings.max_attempts, from_flag.settings.job_timeout) == (7, 30.0)
    from_editor = load_settings(tmp_path, {"maxAttempts": 9}, {}, overrides_source="the editor's settings")
    assert from_editor.settings.max_attempts == 9
    assert from_editor.sources["max_attempts"] == "the editor's settings"


@pytest.mark.parametrize(("line", "key", "default"), [
    ('model = "expensive-model"', "model", None),
    ('embedded_model_size = "0.5b"', "embedded_model_size", "1.5b"),
])
def test_a_project_cannot_choose_the_model(tmp_path: Path, line: str, key: str, default: str | None) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.pycapsule]\n{line}\n")
    loaded = load_settings(tmp_path, None, {})
    assert getattr(loaded.settings, key) == default and loaded.sources[key] == "default"
    [warning] = loaded.warnings
    assert warning.startswith(f"Setting '{key}' in {pyproject} is ignored: the model is yours to choose, not "
                              "a project's; set it in your own configuration (")
    mine = load_settings(tmp_path, {key: "0.5b" if key == "embedded_model_size" else "mine"}, {})
    assert getattr(mine.settings, key) in ("0.5b", "mine")


def test_config_shows_the_value_used_and_where_it_came_from(clean_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    pyproject = project(tmp_path, {"model": '"expensive-model"', "max_attempts": "50", "job_timeout": "600.0",
                                   "max_tokens": "512"})
    done = subprocess.run([sys.executable, "-m", "pycapsule", "config", str(tmp_path), "--json"],
                          env=clean_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    shown = {key: (row["value"], row["source"]) for key, row in report["settings"].items()}
    assert shown["model"] == (None, "default")
    assert shown["max_attempts"] == (3, "default") and shown["job_timeout"] == (10.0, "default")
    assert shown["max_tokens"] == (512, str(pyproject))
    assert report["settings"]["max_attempts"]["lower_only"] and report["settings"]["model"]["user_only"]
    said = [line for line in done.stderr.splitlines() if str(pyproject) in line]
    assert len(said) == 3 and said == [f"pycapsule config: warning: {w}" for w in report["warnings"]]
    assert any("'max_attempts' = 50" in line and "lowered to the default 3" in line for line in said)
    assert any("'model' in" in line and "is ignored" in line for line in said)
