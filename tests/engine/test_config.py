"""Settings: defaults <- pyproject.toml <- environment <- overrides; bad values fall back, said once."""

from __future__ import annotations

from pathlib import Path

from pycapsule.config import DEFAULTS, load_settings, project_root

SECRET = "sk-very-secret-key"


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.pycapsule]\n{table}\n")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    module = package / "mod.py"
    module.write_text("def f():\n    ...\n")
    return module


def test_defaults_without_any_configuration(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, environ={})
    assert loaded.settings == DEFAULTS and loaded.warnings == [] and loaded.pyproject is None
    assert DEFAULTS.max_attempts == 5 and DEFAULTS.restart_after == 1 and DEFAULTS.history_window == 2
    assert DEFAULTS.temperature == 0 and 0.3 <= DEFAULTS.retry_temperature <= 0.7
    assert DEFAULTS.uses_embedded_model


def test_layers_win_in_order(tmp_path: Path) -> None:
    module = project(tmp_path, 'max-attempts = 3\nmodel = "from-file"\nrestart_after = 4\njob_timeout = 2.5')
    environ = {"PYCAPSULE_MODEL": "from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    loaded = load_settings(module, {"maxAttempts": 7, "sandbox": None}, environ)
    s = loaded.settings
    assert (s.max_attempts, s.model, s.restart_after, s.job_timeout) == (7, "from-env", 4, 2.5)
    assert s.base_url == "http://127.0.0.1:9/v1" and not s.uses_embedded_model
    assert loaded.pyproject == tmp_path / "pyproject.toml" and loaded.warnings == []


def test_a_bad_value_names_the_key_and_the_default(tmp_path: Path) -> None:
    module = project(tmp_path, 'max_attempts = "many"\nhistory_window = 2')
    loaded = load_settings(module, {"retry_temperature": 9}, {})
    assert loaded.settings.max_attempts == 5
    assert loaded.settings.retry_temperature == DEFAULTS.retry_temperature
    assert len(loaded.warnings) == 2
    file_warning = next(w for w in loaded.warnings if "max_attempts" in w)
    assert "'many'" in file_warning and str(tmp_path / "pyproject.toml") in file_warning
    assert file_warning.endswith("using the default 5.")


def test_unknown_keys_and_broken_files_are_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule\n")
    loaded = load_settings(tmp_path, {"colour": "blue"}, {})
    assert loaded.settings == DEFAULTS
    assert any("could not be read" in w for w in loaded.warnings)
    assert any("Unknown setting 'colour'" in w for w in loaded.warnings)


def test_the_key_comes_from_the_named_variable_and_stays_secret(tmp_path: Path) -> None:
    module = project(tmp_path, f'api_key_env = "MY_KEY"\napi_key = "{SECRET}-in-file"')
    loaded = load_settings(module, None, {"MY_KEY": SECRET, "OPENAI_API_KEY": "other"})
    s = loaded.settings
    assert s.api_key is not None and s.api_key.get_secret_value() == SECRET
    assert any("keep secrets out of files" in w for w in loaded.warnings)
    for shown in (repr(s), str(s), str(s.public()), s.model_dump_json(), *loaded.warnings):
        assert SECRET not in shown


def test_an_invalid_key_value_is_not_echoed(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, {"api_key": 12345}, {})
    assert loaded.settings.api_key is None
    assert any("'api_key' = (hidden)" in w for w in loaded.warnings)
    assert not any("12345" in w for w in loaded.warnings)


def test_the_project_root_is_the_nearest_marked_folder(tmp_path: Path) -> None:
    module = project(tmp_path, "")
    assert project_root(module) == tmp_path
    loose = tmp_path / "elsewhere"
    loose.mkdir()
    (loose / ".git").mkdir()
    (loose / "deep").mkdir()
    assert project_root(loose / "deep" / "m.py") == loose
    assert project_root(None) is None
