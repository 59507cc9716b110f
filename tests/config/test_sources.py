"""Every setting comes from the user's config file, the project's `[tool.pycapsule]` (trusted keys
excepted), `PYCAPSULE_<NAME>` variables and the command line, later wins; each value's source is known."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pycapsule.config import USER_ONLY_KEYS, Settings, env_names, load_settings

# a valid value other than the default, as the environment would hold it, for every setting
SAMPLES = {
    "model": ("m1", "m1"),
    "base_url": ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
    "api_key_env": ("MY_KEY", "MY_KEY"),
    "embedded_model_size": ("0.5b", "0.5b"),
    "embedded_model_file": ("/models/mine.gguf", "/models/mine.gguf"),
    "model_idle_timeout": ("60", 60.0),
    "model_gpu_layers": ("8", 8),
    "request_timeout": ("12.5", 12.5),
    "inactivity_timeout": ("7", 7.0),
    "stall_notice": ("12", 12.0),
    "model_retries": ("0", 0),
    "retry_backoff": ("0.5", 0.5),
    "retry_after_cap": ("3", 3.0),
    "max_tokens": ("512", 512),
    "temperature": ("0.2", 0.2),
    "retry_temperature": ("0.9", 0.9),
    "answer_prefill": ("embedded", "embedded"),
    "fast_forward_echo": ("always", "always"),
    "context_chars": ("1000", 1000),
    "prompt_cache": ("never", "never"),
    "read_ahead": ("false", False),
    "max_attempts": ("4", 4),
    "restart_after": ("2", 2),
    "history_window": ("1", 1),
    "fix_repeated_failures": ("true", True),
    "second_opinions": ("1", 1),
    "iterator_examples": ("false", False),
    "min_caught": ("0.5", 0.5),
    "max_mutants": ("20", 20),
    "strict_signatures": ("true", True),
    "sandbox": ("docker", "docker"),
    "job_timeout": ("4", 4.0),
    "project_tests": ("false", False),
    "test_timeout": ("30", 30.0),
    "python": (sys.executable, sys.executable),
    "diagnostics": ("false", False),
}


def test_the_samples_cover_every_setting() -> None:
    assert set(SAMPLES) == set(Settings.model_fields) - {"api_key"}  # the key: see the next tests


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_every_setting_has_its_own_environment_variable(tmp_path: Path, key: str) -> None:
    text, expected = SAMPLES[key]
    variable = f"PYCAPSULE_{key.upper()}"
    assert env_names(key)[0] == variable
    loaded = load_settings(tmp_path, None, {variable: text})
    assert getattr(loaded.settings, key) == expected != getattr(Settings(), key)
    assert loaded.sources[key] == f"${variable}" and loaded.warnings == []


def test_the_key_comes_from_the_variable_api_key_env_names(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_API_KEY_ENV": "MY_KEY", "MY_KEY": "sk-mine",
                                            "OPENAI_API_KEY": "sk-other-tool"})
    assert loaded.settings.api_key is not None and loaded.settings.api_key.get_secret_value() == "sk-mine"
    assert loaded.sources["api_key"] == "$MY_KEY"


def test_later_sources_win_and_each_value_says_where_it_came_from(tmp_path: Path) -> None:
    user_file = tmp_path / "user.toml"
    user_file.write_text("max_attempts = 2\nhistory_window = 1\njob_timeout = 3.0\nmodel = 'u'\n")
    (tmp_path / "repo").mkdir()
    pyproject = tmp_path / "repo" / "pyproject.toml"
    pyproject.write_text("[tool.pycapsule]\nmax_attempts = 3\nhistory_window = 0\nmodel = 'p'\n")
    environ = {"PYCAPSULE_CONFIG": str(user_file), "PYCAPSULE_MAX_ATTEMPTS": "4", "PYCAPSULE_MODEL": "e"}
    loaded = load_settings(tmp_path / "repo", {"model": "flag"}, environ)
    s = loaded.settings
    got = (s.max_attempts, s.history_window, s.job_timeout, s.model, s.restart_after)
    assert got == (4, 0, 3.0, "flag", 0)
    assert loaded.sources == {**loaded.sources, "max_attempts": "$PYCAPSULE_MAX_ATTEMPTS",
                              "history_window": str(pyproject), "job_timeout": str(user_file),
                              "model": "the command line (--model)", "restart_after": "default"}


def test_pycapsules_own_variable_beats_the_openai_clients(tmp_path: Path) -> None:
    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "PYCAPSULE_BASE_URL": "http://127.0.0.1:2/v1"}
    loaded = load_settings(tmp_path, None, environ)
    assert loaded.settings.base_url == "http://127.0.0.1:2/v1"
    assert loaded.sources["base_url"] == "$PYCAPSULE_BASE_URL"
    only_openai = load_settings(tmp_path, None, {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert only_openai.sources["base_url"] == "$OPENAI_BASE_URL"


@pytest.mark.parametrize("key", sorted(USER_ONLY_KEYS))
def test_trusted_keys_from_the_environment_but_never_from_the_project(tmp_path: Path, key: str) -> None:
    text, expected = SAMPLES[key]
    (tmp_path / "pyproject.toml").write_text(f"[tool.pycapsule]\n{key} = {text!r}\n".replace("'", '"'))
    from_project = load_settings(tmp_path, None, {})
    assert getattr(from_project.settings, key) == getattr(Settings(), key)
    assert from_project.sources[key] == "default" and "is ignored" in from_project.warnings[0]
    from_env = load_settings(tmp_path, None, {f"PYCAPSULE_{key.upper()}": text})
    assert getattr(from_env.settings, key) == expected
