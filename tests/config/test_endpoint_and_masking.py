"""Which endpoint a run uses, in one line, and credentials in URLs masked by the one function for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.config import Settings, load_settings
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.redact import mask_credentials


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, "embedded Qwen2.5-Coder 1.5B"),
    ({"PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"}, "embedded Qwen2.5-Coder 0.5B"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/", "PYCAPSULE_MODEL": "qwen"},
     "http://127.0.0.1:8080/v1 (model qwen)"),
    ({"OPENAI_API_KEY": "sk-for-another-tool"},
     "https://api.openai.com/v1 (model gpt-4.1-mini, the default there), because $OPENAI_API_KEY is set "
     "and no base_url is configured"),
    ({"PYCAPSULE_API_KEY_ENV": "MY_KEY", "MY_KEY": "k", "PYCAPSULE_MODEL": "gpt-x"},
     "https://api.openai.com/v1 (model gpt-x), because $MY_KEY is set and no base_url is configured"),
    ({"OPENAI_BASE_URL": "ftp://files.example/v1", "OPENAI_API_KEY": "sk-x"},
     "none: the base_url 'ftp://files.example/v1' is invalid"),
])
def test_the_endpoint_in_one_line(tmp_path: Path, environ: dict[str, str], expected: str) -> None:
    assert endpoint_description(load_settings(tmp_path, None, environ).settings) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("https://user:pass@host.example/v1", "https://***@host.example/v1"),
    ("http://token@10.0.0.1:8080/v1", "http://***@10.0.0.1:8080/v1"),
    ("cannot reach https://u:p%40ss@h/v1: refused", "cannot reach https://***@h/v1: refused"),
    ("https://h/v1?api_key=abc123&x=1", "https://h/v1?api_key=***&x=1"),
    ("https://h/v1?key=abc#frag", "https://h/v1?key=***#frag"),
    ("http://127.0.0.1:8080/v1 plain user@example.org", "http://127.0.0.1:8080/v1 plain user@example.org"),
])
def test_credentials_in_urls_are_masked(text: str, expected: str) -> None:
    assert mask_credentials(text) == expected


def test_settings_shown_anywhere_hide_url_credentials() -> None:
    settings = Settings(base_url="https://alice:hunter2@llm.example/v1", api_key="sk-secret")
    shown = str(settings.public())
    assert "hunter2" not in shown and "alice" not in shown and "sk-secret" not in shown
    assert "hunter2" not in endpoint_description(settings)
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings)
