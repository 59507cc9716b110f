"""One validation rule for every source: a bad value from a file or the environment is one warning naming
the key, the source and the value used instead; nothing is coerced silently; the base_url never falls back
to another endpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pycapsule.config import Settings, endpoint_problem, flag_type, load_settings


def project(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.pycapsule]\n{table}\n")
    return path


@pytest.mark.parametrize(("line", "key"), [
    ("max_attempts = true", "max_attempts"),       # a boolean is not a number of attempts
    ("max_attempts = 2.5", "max_attempts"),
    ("job_timeout = inf", "job_timeout"),           # TOML has infinities and NaN: no timeout is infinite
    ("request_timeout = nan", "request_timeout"),
    ("inactivity_timeout = -1", "inactivity_timeout"),
    ("diagnostics = 1", "diagnostics"),             # 1 is not true
    ("temperature = '0.5'", "temperature"),         # a file's types are its own: text is not a number
    ("answer_prefill = 'sometimes'", "answer_prefill"),  # (embedded_model_size: never from a project)
])
def test_a_bad_value_in_a_file_is_named_with_its_file_and_the_default(
        tmp_path: Path, line: str, key: str) -> None:
    pyproject = project(tmp_path, line)
    loaded = load_settings(tmp_path, None, {})
    assert getattr(loaded.settings, key) == getattr(Settings(), key)
    [warning] = loaded.warnings
    assert warning.startswith(f"Setting '{key}' = ") and f"from {pyproject} is invalid" in warning
    assert "using the default" in warning and "\n" not in warning


def test_an_unknown_sandbox_in_the_users_file_names_the_key_and_the_file(tmp_path: Path) -> None:
    user_file = tmp_path / "config.toml"
    user_file.write_text('sandbox = "nosuch"\n')
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_CONFIG": str(user_file)})
    assert loaded.settings.sandbox is None
    [warning] = loaded.warnings
    assert warning == (f"Setting 'sandbox' = 'nosuch' from {user_file} is invalid (must be 'bwrap', 'docker' "
                       "or 'unsafe-subprocess'); using the default none (the first backend that works).")


@pytest.mark.parametrize(("text", "key"), [
    ("true", "max_attempts"), ("0", "max_attempts"), ("inf", "request_timeout"), ("nan", "job_timeout"),
    ("1e999", "inactivity_timeout"), ("many", "model_retries"), ("nosuch", "sandbox"),
    ("maybe", "diagnostics"),
])
def test_a_bad_value_in_the_environment_names_the_variable(tmp_path: Path, text: str, key: str) -> None:
    variable = f"PYCAPSULE_{key.upper()}"
    loaded = load_settings(tmp_path, None, {variable: text})
    assert getattr(loaded.settings, key) == getattr(Settings(), key)
    [warning] = loaded.warnings
    assert f"from ${variable} is invalid" in warning and "using the default" in warning


def test_a_bad_value_falls_back_to_the_next_source_and_says_which(tmp_path: Path) -> None:
    pyproject = project(tmp_path, "max_attempts = 3")
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_MAX_ATTEMPTS": "lots"})
    assert loaded.settings.max_attempts == 3 and loaded.sources["max_attempts"] == str(pyproject)
    [warning] = loaded.warnings
    assert warning.endswith(f"using 3 from {pyproject}.")


def test_a_bad_base_url_is_kept_so_nothing_is_sent_elsewhere(tmp_path: Path) -> None:
    """Falling back would mean the embedded model or, with a key set, api.openai.com."""
    environ = {"OPENAI_BASE_URL": "htp://user:pa55word@localhost:8080/v1", "OPENAI_API_KEY": "sk-x"}
    loaded = load_settings(tmp_path, None, environ)
    [warning] = loaded.warnings
    assert "'base_url'" in warning and "$OPENAI_BASE_URL" in warning and "http:// or https://" in warning
    assert warning.endswith("no model is asked until it is fixed.") and "pa55word" not in warning
    assert not loaded.settings.uses_embedded_model
    problem = endpoint_problem(loaded.settings)
    assert problem is not None and "base_url" in problem and "pa55word" not in problem
    assert endpoint_problem(load_settings(tmp_path, None, {}).settings) is None


@pytest.mark.parametrize(("key", "text", "expected"), [
    ("max_attempts", "3", 3), ("request_timeout", "2.5", 2.5), ("sandbox", "docker", "docker"),
])
def test_flag_values_are_read_by_the_same_rule(key: str, text: str, expected: object) -> None:
    assert flag_type(key)(text) == expected


@pytest.mark.parametrize(("key", "text", "says"), [
    ("max_attempts", "0", "greater than or equal to 1"), ("max_attempts", "true", "integer"),
    ("inactivity_timeout", "inf", "finite"), ("sandbox", "nosuch", "no sandbox backend named 'nosuch'"),
])
def test_a_bad_flag_value_is_a_usage_error(key: str, text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        flag_type(key)(text)
