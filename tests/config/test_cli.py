"""The command line: bad flag values are usage errors, `pycapsule config` shows every setting and its
source, a run announces the endpoint it uses, a hung or failing endpoint ends the run at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import Error, FakeOpenAI, Hang, Text

STUBS = '''def one():
    """
    >>> one()
    1
    """


def two():
    """
    >>> two()
    2
    """


def three():
    """
    >>> three()
    3
    """
'''


def pycapsule(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("flags", [
    ["--max-attempts", "0"], ["--max-attempts", "true"], ["--backend", "nosuch"],
    ["--inactivity-timeout", "inf"], ["--request-timeout", "-5"],
])
def test_a_bad_flag_value_is_a_usage_error(clean_env: dict[str, str], tmp_path: Path,
                                           flags: list[str]) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUBS)
    done = pycapsule("generate", str(module), *flags, env=clean_env)
    assert done.returncode == 2
    assert f"error: argument {flags[0]}:" in done.stderr
    assert "pycapsule: model:" not in done.stderr and "attempt 1/" not in done.stderr  # nothing ran
    assert module.read_text() == STUBS


def test_config_shows_every_setting_with_its_source(clean_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 3\n")
    Path(clean_env["PYCAPSULE_CONFIG"]).write_text("history_window = 1\n")
    env = {**clean_env, "PYCAPSULE_JOB_TIMEOUT": "4", "OPENAI_API_KEY": "sk-never-shown",
           "OPENAI_BASE_URL": "https://alice:hunter2@llm.example/v1"}
    done = pycapsule("config", str(tmp_path), "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    settings = report["settings"]
    assert {key: settings[key]["source"] for key in ("max_attempts", "history_window", "job_timeout",
                                                      "api_key", "base_url", "restart_after")} == {
        "max_attempts": str(tmp_path / "pyproject.toml"), "history_window": clean_env["PYCAPSULE_CONFIG"],
        "job_timeout": "$PYCAPSULE_JOB_TIMEOUT", "api_key": "$OPENAI_API_KEY", "base_url": "$OPENAI_BASE_URL",
        "restart_after": "default"}
    assert settings["max_attempts"]["value"] == 3 and settings["api_key"]["value"] == "***"
    assert settings["base_url"]["value"] == "https://***@llm.example/v1"
    assert settings["sandbox"]["user_only"] and not settings["max_attempts"]["user_only"]
    assert report["endpoint"] == "https://***@llm.example/v1 (the endpoint's first chat model)"
    text = pycapsule("config", str(tmp_path), env=env)
    for shown in (done.stdout, done.stderr, text.stdout, text.stderr):
        assert "sk-never-shown" not in shown and "hunter2" not in shown and "alice" not in shown
    assert any(line.split() == ["job_timeout", "4.0", "$PYCAPSULE_JOB_TIMEOUT"]
               for line in text.stdout.splitlines()), text.stdout


def test_a_key_for_another_tool_is_shown_to_select_openai(clean_env: dict[str, str], tmp_path: Path) -> None:
    """The openai client's own variables choose the endpoint; the user must be able to see that."""
    done = pycapsule("config", str(tmp_path), env={**clean_env, "OPENAI_API_KEY": "sk-for-another-tool"})
    assert ("model endpoint:   https://api.openai.com/v1 (model gpt-4.1-mini, the default there), because "
            "$OPENAI_API_KEY is set and no base_url is configured") in done.stdout


def test_generate_announces_the_endpoint_first(clean_env: dict[str, str], tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUBS)
    with FakeOpenAI() as server:
        server.queue(Text("```python\ndef one():\n    return 1\n```"))
        env = {**clean_env, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-fake"}
        done = pycapsule("generate", f"{module}::one", "--model", "fake-coder", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"pycapsule: model: {server.base_url} (model fake-coder)"


def test_a_hung_endpoint_is_given_up_after_the_inactivity_timeout(clean_env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUBS)
    with FakeOpenAI() as server:
        server.queue(Hang(), Hang(), Hang())
        env = {**clean_env, "OPENAI_BASE_URL": server.base_url, "PYCAPSULE_MODEL": "fake-coder"}
        done = pycapsule("generate", str(module), "--inactivity-timeout", "0.5", env=env)
        requests = len(server.chat_requests)
    assert done.returncode == 3 and module.read_text() == STUBS  # 3: the model could not be used
    assert requests == 1, done.stderr  # not retried, and the other two functions are not tried
    assert f"the model at {server.base_url} sent nothing for 0.5 s" in done.stderr
    assert "stopped: the model cannot be used; not done: one, two, three" in done.stderr


def test_an_endpoint_failure_ends_a_run_over_several_functions(clean_env: dict[str, str],
                                                                tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUBS)
    with FakeOpenAI() as server:
        server.queue(Error(401, "Incorrect API key provided"), Text("never asked"))
        env = {**clean_env, "OPENAI_BASE_URL": server.base_url, "PYCAPSULE_MODEL": "fake-coder",
               "OPENAI_API_KEY": "sk-wrong-key-123"}
        done = pycapsule("generate", str(module), env=env)
        requests = len(server.chat_requests)
    assert done.returncode == 3 and requests == 1
    errors = [line for line in done.stderr.splitlines() if "refused the API key" in line]
    assert len(errors) == 1 and "check $OPENAI_API_KEY." in errors[0] and "sk-wrong" not in done.stderr
    assert "APIStatusError" not in done.stderr and "AuthenticationError" not in done.stderr


def test_a_bad_base_url_is_reported_as_such(clean_env: dict[str, str], tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUBS)
    env = {**clean_env, "OPENAI_BASE_URL": "localhost:8080/v1"}
    done = pycapsule("generate", str(module), env=env)
    assert done.returncode == 3 and module.read_text() == STUBS  # 3: the model could not be used
    assert "Setting 'base_url' = 'localhost:8080/v1' from $OPENAI_BASE_URL is invalid" in done.stderr
    assert "the configured base_url 'localhost:8080/v1' cannot be used" in done.stderr
    assert "no model name set" not in done.stderr and "starting the local model" not in done.stderr
