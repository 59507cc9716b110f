"""`pycapsule generate` as a user runs it: the real CLI in a subprocess, the scripted model over HTTP,
the real default sandbox."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pycapsule.exit_codes import ExitCode

from tests.engine.conftest import FAKE_KEY
from tests.fakes.openai_server import Error, FakeOpenAI

STUBS = '''import math


def area(r):
    """Area of a circle, rounded.

    >>> area(1)
    3
    >>> area(2)
    13
    """


class Shapes:
    def square(self, side):
        """
        >>> Shapes().square(3)
        9
        """
        raise NotImplementedError


def done():
    return "already written"
'''

AREA = "```python\ndef area(r):\n    return round(math.pi * r * r)\n```"
AREA_WRONG = "```python\ndef area(r):\n    return int(math.pi * r * r)\n```"
SQUARE = "```python\ndef square(self, side):\n    return side * side\n```"


def with_area_body(statement: str) -> str:
    return STUBS.replace('    13\n    """\n', f'    13\n    """\n    {statement}\n')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nretry_backoff = 0.01\nmodel_retries = 1\n")
    path = tmp_path / "shapes.py"
    path.write_text(STUBS)
    path.chmod(0o640)
    return path


def generate(server: FakeOpenAI, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": FAKE_KEY,
           "PYCAPSULE_MODEL": "fake-coder"}
    result = subprocess.run([sys.executable, "-m", "pycapsule", "generate", *args], env=env, cwd=cwd,
                            capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr
    assert FAKE_KEY not in result.stdout + result.stderr
    return result


def test_prints_a_diff_and_leaves_the_file_alone(openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(AREA)
    result = generate(openai_server, f"{project}::area")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"--- a/{project}\n+++ b/{project}\n")
    assert "+    return round(math.pi * r * r)\n" in result.stdout
    assert project.read_text() == STUBS
    assert "area: attempt 1/3: generating" in result.stderr
    assert "passed: area: 2 examples pass after 1 attempt(s)" in result.stderr


def test_write_applies_only_the_body_and_keeps_the_mode(openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(AREA_WRONG, AREA)
    result = generate(openai_server, f"{project}::area", "--write")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert project.read_text() == with_area_body("return round(math.pi * r * r)")
    assert project.stat().st_mode & 0o777 == 0o640
    # the failure was shown with its condensed error, then fixed
    assert "area: attempt 1/3: doctest failed" in result.stderr
    assert "    Expected: 13" in result.stderr and "    Got: 12" in result.stderr
    assert "area: attempt 2/3: starting over" in result.stderr


def test_every_stub_in_the_file(openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(AREA, SQUARE)
    result = generate(openai_server, str(project), "--write", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(r["qualname"], r["status"]) for r in report["results"]] == [("area", "passed"),
                                                                         ("Shapes.square", "passed")]
    assert report["passed"] and report["written"] and report["results"][0]["completion_tokens"] > 0
    text = project.read_text()
    assert "    return round(math.pi * r * r)\n" in text and "        return side * side\n" in text
    assert "raise NotImplementedError" not in text and 'return "already written"' in text


def test_budget_exhausted_fails_clearly_and_writes_nothing(openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(AREA_WRONG, AREA_WRONG)
    result = generate(openai_server, f"{project}::area", "--write", "--max-attempts", "2")
    assert result.returncode == 1
    assert "gave_up: area: still failing after 2 attempt(s)" in result.stderr
    assert project.read_text() == STUBS and openai_server.pending == 0


def test_not_verified_is_said_and_is_not_success(openai_server: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text('def double(x):\n    """Twice x."""\n')
    openai_server.queue("```python\ndef double(x):\n    return 2 * x\n```")
    result = generate(openai_server, str(path), "--write")
    assert result.returncode == 1
    assert "NOT verified" in result.stderr and "return 2 * x" in path.read_text()


@pytest.mark.parametrize("failure", [Error(500, "overloaded"), Error(429, "too many requests")])
def test_model_failure_is_one_line_and_exit_3(
        openai_server: FakeOpenAI, project: Path, failure: Error) -> None:
    openai_server.queue(failure, failure)
    result = generate(openai_server, f"{project}::area", "--write")
    assert result.returncode == ExitCode.MODEL_UNAVAILABLE
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("pycapsule: error:")]
    assert failure.message in line and "after 2 tries" in line
    assert project.read_text() == STUBS


def test_model_down(project: Path) -> None:
    server = FakeOpenAI().start()
    server.stop()
    result = generate(server, f"{project}::area")
    assert result.returncode == ExitCode.MODEL_UNAVAILABLE and "cannot reach the model" in result.stderr


@pytest.mark.parametrize(("target", "message"), [
    ("missing.py", "missing.py is not a file."),
    ("{project}::nope", "no function"),
])
def test_usage_errors_exit_2_with_one_sentence(
        openai_server: FakeOpenAI, project: Path, target: str, message: str) -> None:
    result = generate(openai_server, target.format(project=project), cwd=project.parent)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("pycapsule: ") and message in line
    assert openai_server.chat_requests == []


def test_the_file_changed_meanwhile_is_not_overwritten(openai_server: FakeOpenAI, project: Path) -> None:
    def edit_then_answer(request: object) -> str:
        project.write_text(STUBS + "\n# edited by the user meanwhile\n")
        return AREA

    openai_server.responder = edit_then_answer
    result = generate(openai_server, f"{project}::area", "--write")
    assert result.returncode == 1 and "changed on disk" in result.stderr
    assert project.read_text().endswith("# edited by the user meanwhile\n")


def test_progress_on_a_terminal_is_a_live_status_with_the_failures(
        openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(AREA_WRONG, AREA)
    env = {**os.environ, "OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": FAKE_KEY,
           "COLUMNS": "200", "TERM": "xterm"}
    done = on_a_terminal([sys.executable, "-m", "pycapsule", "generate", f"{project}::area"], env)
    raw, stdout = done.stderr, done.stdout
    assert "\x1b[" in raw  # drawn as a live status, not plain lines
    terminal = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert done.returncode == 0 and stdout.startswith("--- a/")
    assert "area: attempt 1/3: generating" in terminal and "area: attempt 2/3: starting over" in terminal
    assert "area: attempt 1/3: doctest failed" in terminal and "Got: 12" in terminal
    assert "Traceback" not in terminal and FAKE_KEY not in terminal


def on_a_terminal(command: list[str], env: dict[str, str], cwd: Path | None = None,
                  ) -> subprocess.CompletedProcess[str]:
    """`command` run with its stderr on a pty: its exit code, stdout and what the terminal showed (stderr)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    shown = bytearray()
    reader = threading.Thread(target=_drain, args=(leader, shown), daemon=True)
    reader.start()
    stdout, _ = process.communicate(timeout=300)
    reader.join(10)
    os.close(leader)
    return subprocess.CompletedProcess(command, process.returncode, stdout, shown.decode(errors="replace"))


def _drain(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed
            return
        if not chunk:
            return
        into.extend(chunk)


def test_a_written_function_is_checked_first_and_fixed_only_if_it_fails(
        openai_server: FakeOpenAI, project: Path) -> None:
    project.write_text(with_area_body("return int(math.pi * r * r)"))
    openai_server.queue(AREA)
    result = generate(openai_server, f"{project}::area", "--write")
    assert result.returncode == 0, result.stderr
    assert "area: checking the current body" in result.stderr and "area: attempt 1/3: fixing" in result.stderr
    (request,) = openai_server.chat_requests
    assert "int(math.pi * r * r)" in request.messages[-1]["content"]  # the body as it stands, to repair
    assert "    return round(math.pi * r * r)\n" in project.read_text()

    again = generate(openai_server, f"{project}::area", "--write")
    assert again.returncode == 0 and "2 examples already pass; they catch" in again.stderr
    assert "small changes; nothing to change" in again.stderr
    assert len(openai_server.chat_requests) == 1
