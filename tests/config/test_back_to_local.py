"""Two first steps of a new user (issue 49 item 5): with OPENAI_API_KEY exported for another tool,
`PYCAPSULE_BASE_URL=embedded` (or `base_url = "embedded"` in their own config file) goes back to the embedded
local model and sends the key nowhere; and a setting given twice under two spellings in one source is not
resolved silently: one line names both and the one used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pycapsule.config import load_settings
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.model_client import ModelSettings

KEY = "sk-for-another-tool-123"


def test_base_url_embedded_uses_the_local_model_with_a_key_exported(clean_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    env = {**clean_env, "OPENAI_API_KEY": KEY, "PYCAPSULE_BASE_URL": "embedded"}
    loaded = load_settings(tmp_path, environ=env)
    assert loaded.warnings == []
    assert loaded.settings.uses_embedded_model and loaded.settings.api_key is None
    assert endpoint_description(loaded.settings).startswith("embedded Qwen2.5-Coder")
    assert ModelSettings.from_settings(loaded.settings, base_url="http://127.0.0.1:9/v1").api_key is None
    done = subprocess.run([sys.executable, "-m", "pycapsule", "config", str(tmp_path), "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    shown = json.loads(done.stdout)
    assert shown["endpoint"].startswith("embedded Qwen2.5-Coder"), shown["endpoint"]
    assert shown["settings"]["base_url"]["source"] == "$PYCAPSULE_BASE_URL"
    assert shown["settings"]["api_key"]["value"] is None and KEY not in done.stdout + done.stderr


def test_base_url_embedded_in_the_users_file_but_not_a_projects(clean_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    env = {**clean_env, "OPENAI_API_KEY": KEY}
    Path(env["PYCAPSULE_CONFIG"]).write_text('base_url = "embedded"\n')
    assert load_settings(tmp_path, environ=env).settings.uses_embedded_model
    Path(env["PYCAPSULE_CONFIG"]).unlink()
    (tmp_path / "pyproject.toml").write_text('[tool.pycapsule]\nbase_url = "embedded"\n')
    loaded = load_settings(tmp_path, environ=env)
    assert not loaded.settings.uses_embedded_model  # the trust rule: only the user picks the model
    assert any("'base_url'" in warning and "is ignored" in warning for warning in loaded.warnings)


def test_one_setting_under_two_spellings_in_one_file_says_which_is_used(clean_env: dict[str, str],
                                                                        tmp_path: Path) -> None:
    Path(clean_env["PYCAPSULE_CONFIG"]).write_text("max_attempts = 5\nmaxAttempts = 4\n")
    loaded = load_settings(tmp_path, environ=clean_env)
    assert loaded.settings.max_attempts == 4
    user_file = clean_env["PYCAPSULE_CONFIG"]
    assert loaded.warnings == [f"Setting 'max_attempts' is given twice in {user_file}, as 'max_attempts' and "
                               "'maxAttempts'; 'maxAttempts' is used."]


def test_one_setting_in_two_variables_says_which_is_used(clean_env: dict[str, str], tmp_path: Path) -> None:
    env = {**clean_env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
           "PYCAPSULE_BASE_URL": "http://127.0.0.1:8/v1"}
    loaded = load_settings(tmp_path, environ=env)
    assert loaded.settings.base_url == "http://127.0.0.1:8/v1"
    assert loaded.warnings == ["Setting 'base_url' is given twice in the environment, as $PYCAPSULE_BASE_URL "
                               "and $OPENAI_BASE_URL; $PYCAPSULE_BASE_URL is used."]
    same = {**env, "OPENAI_BASE_URL": env["PYCAPSULE_BASE_URL"]}
    assert load_settings(tmp_path, environ=same).warnings == []  # the same value twice is no conflict
