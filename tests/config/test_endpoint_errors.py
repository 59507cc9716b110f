"""How a model endpoint that cannot be used is said (issue 49 item 5): one sentence naming the endpoint (its
credentials masked) and the cause, then what to check about that cause, and nothing unrelated after it (no
time and tokens of a run that never started, no advice about naming the model when the server is down)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import Error, FakeOpenAI, Hang

STUB = '''def one():
    """
    >>> one()
    1
    """
'''


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def the_error(clean_env: dict[str, str], tmp_path: Path, base_url: str, *flags: str) -> str:
    """`generate` against `base_url` (credentials in it): its one error line, after 'pycapsule: error: '."""
    module = tmp_path / "mod.py"
    module.write_text(STUB)
    env = {**clean_env, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-wrong-key-123",
           "PYCAPSULE_MODEL_RETRIES": "0"}
    done = subprocess.run([sys.executable, "-m", "pycapsule", "generate", f"{module}::one", *flags], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "alice" not in done.stderr and "hunter2" not in done.stderr and "sk-wrong" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("pycapsule: error: ")]
    return line.removeprefix("pycapsule: error: ")


@pytest.mark.parametrize("flags", [["--model", "fake-coder"], []], ids=["model named", "model listed"])
def test_connection_refused(clean_env: dict[str, str], tmp_path: Path, flags: list[str]) -> None:
    where = f"http://***@127.0.0.1:{closed_port()}/v1"
    said = the_error(clean_env, tmp_path, where.replace("***", "alice:hunter2"), *flags)
    assert said == (f"cannot reach the model at {where}: connection refused; check that the server is "
                    "running and that base_url is right.")


SCRIPTED = {
    "key refused": ([Error(401, "Incorrect API key provided")], [],
                    "the model at {where} refused the API key (401: Incorrect API key provided); check "
                    "$OPENAI_API_KEY."),
    "model not found": ([Error(404, "The model `nosuch-coder` does not exist")], ["--model", "nosuch-coder"],
                        "the endpoint at {where} does not know model 'nosuch-coder' (404: The model "
                        "`nosuch-coder` does not exist); check the model name (--model or PYCAPSULE_MODEL)."),
    # a 404 that is not about the model (a web server at base_url, not the API) is not blamed on the model
    "no API there": ([Error(404, body="<html><head><title>404 Not Found</title></head></html>",
                            content_type="text/html")], [],
                     "the endpoint at {where} has no chat completions API (404: 404 Not Found); check that "
                     "base_url is the API's address (it usually ends in /v1)."),
    "timeout": ([Hang()], ["--inactivity-timeout", "0.5"],
                "the model at {where} sent nothing for 0.5 s; check that it is running and not overloaded, "
                "or raise inactivity_timeout."),
}


@pytest.mark.parametrize("case", list(SCRIPTED))
def test_scripted_endpoint_failures(clean_env: dict[str, str], tmp_path: Path, case: str) -> None:
    replies, flags, sentence = SCRIPTED[case]
    with FakeOpenAI() as server:
        server.queue(*replies)
        where = server.base_url.replace("http://", "http://***@")
        said = the_error(clean_env, tmp_path, where.replace("***", "alice:hunter2"),
                         *(flags or ["--model", "fake-coder"]))
    assert said == sentence.format(where=where)
