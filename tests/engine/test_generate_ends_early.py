"""A multi-function `pycapsule generate` that ends early keeps what it has and says what it left: Ctrl-C
(a real SIGINT to a real process while the scripted model holds a request), or a model that cannot be
used (one message, no retrying stub after stub). And what its progress shows on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pycapsule.exit_codes import ExitCode

from tests.engine.conftest import FAKE_KEY
from tests.engine.test_generate_cli import AREA, STUBS, _drain
from tests.fakes.openai_server import Error, FakeOpenAI, Hang, RecordedRequest, Text

THIRD = '''

def cube(n):
    """
    >>> cube(2)
    8
    """
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nretry_backoff = 0.01\nmodel_retries = 1\n")
    path = tmp_path / "shapes.py"
    path.write_text(STUBS + THIRD)
    return path


def environment(server: FakeOpenAI) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": FAKE_KEY,
            "PYCAPSULE_MODEL": "fake-coder", "COLUMNS": "200", "TERM": "xterm"}


def answer_area_then_hold(server: FakeOpenAI) -> threading.Event:
    """The first function gets its answer; the second request is held open. Set: the second came."""
    holding = threading.Event()

    def respond(request: RecordedRequest) -> Text | Hang:
        if len(server.chat_requests) == 1:
            return Text(AREA)
        holding.set()
        return Hang()

    server.responder = respond
    return holding


def interrupted_run(server: FakeOpenAI, project: Path, *flags: str,
                    wait: float = 0.0) -> subprocess.CompletedProcess[str]:
    """Ctrl-C `wait` seconds after the second function's request came."""
    holding = answer_area_then_hold(server)
    process = subprocess.Popen([sys.executable, "-m", "pycapsule", "generate", str(project), *flags],
                               env=environment(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert holding.wait(120), "the second function's request never came"
        time.sleep(wait)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in stderr and FAKE_KEY not in stdout + stderr
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_ctrl_c_writes_the_bodies_that_passed_and_names_the_rest(
        openai_server: FakeOpenAI, project: Path) -> None:
    done = interrupted_run(openai_server, project, "--write")
    assert done.returncode == ExitCode.INTERRUPTED, done.stderr
    text = project.read_text()
    assert "    return round(math.pi * r * r)\n" in text  # area passed before the Ctrl-C: written
    assert "raise NotImplementedError" in text  # Shapes.square was under way: left as it was
    assert "interrupted; written: area; not written: Shapes.square, cube" in done.stderr
    assert f"wrote {project}" in done.stderr


def test_ctrl_c_without_write_prints_the_diff_of_what_passed(
        openai_server: FakeOpenAI, project: Path) -> None:
    done = interrupted_run(openai_server, project)
    assert done.returncode == ExitCode.INTERRUPTED, done.stderr
    assert done.stdout.startswith(f"--- a/{project}\n")
    assert "+    return round(math.pi * r * r)\n" in done.stdout
    assert project.read_text() == STUBS + THIRD
    assert "interrupted; shown in the diff: area; not done: Shapes.square, cube" in done.stderr


def test_ctrl_c_with_json_is_one_document_naming_each_target(
        openai_server: FakeOpenAI, project: Path) -> None:
    done = interrupted_run(openai_server, project, "--write", "--json")
    document = json.loads(done.stdout)
    assert done.returncode == ExitCode.INTERRUPTED == document["exit_code"]
    assert document["error"]["kind"] == "interrupted" and document["written"] is True
    assert [(r["qualname"], r["status"], r["changed"]) for r in document["results"]] == [
        ("area", "passed", True), ("Shapes.square", "cancelled", False), ("cube", "not_run", False)]


def test_ctrl_c_with_json_reports_how_long_the_target_under_way_ran(
        openai_server: FakeOpenAI, project: Path) -> None:
    done = interrupted_run(openai_server, project, "--json", wait=1.5)
    seconds = {r["qualname"]: r["seconds"] for r in json.loads(done.stdout)["results"]}
    assert seconds["Shapes.square"] >= 1.5 and seconds["cube"] == 0.0, seconds  # cube never started


@pytest.mark.parametrize(("failure", "requests"), [
    pytest.param([Error(500, "overloaded")] * 2, 2, id="server-error-after-retries"),
    pytest.param([Error(401, "invalid key")], 1, id="auth-refused"),
])
def test_a_failing_endpoint_ends_the_run_at_once_with_one_message(
        openai_server: FakeOpenAI, project: Path, failure: list[Error], requests: int) -> None:
    openai_server.queue(*failure)
    done = subprocess.run([sys.executable, "-m", "pycapsule", "generate", str(project), "--write"],
                          env=environment(openai_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.MODEL_UNAVAILABLE, done.stderr
    assert len(openai_server.chat_requests) == requests  # not tried again for the next stubs
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("pycapsule: error:")]
    assert failure[0].message in error
    assert "stopped: the model cannot be used; not written: area, Shapes.square, cube" in done.stderr
    assert project.read_text() == STUBS + THIRD


def run_on_a_terminal(server: FakeOpenAI, project: Path) -> tuple[int, str]:
    """`generate PROJECT::area` with stderr on a pty: its exit code and what the terminal showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "pycapsule", "generate", f"{project}::area"],
                               env=environment(server), stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    shown = bytearray()
    reader = threading.Thread(target=_drain, args=(leader, shown), daemon=True)
    reader.start()
    process.communicate(timeout=120)
    reader.join(10)
    os.close(leader)
    return process.returncode, shown.decode(errors="replace")


NO_CODE = "I am sorry, but I would rather explain the idea in words than write it out. " * 3


def test_the_live_line_shows_attempt_elapsed_time_and_tokens_per_second_never_the_model_prompt(
        openai_server: FakeOpenAI, project: Path) -> None:
    openai_server.queue(Text(NO_CODE, chunk_delay=0.03), AREA)
    code, raw = run_on_a_terminal(openai_server, project)
    terminal = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert code == ExitCode.OK, terminal
    writing = r"area: attempt 1/3: generating · writing: \d+ tokens, \d+ tokens/s · \d+\.\d s"
    assert re.search(writing, terminal), terminal
    # the failure is said in the user's words; what the fix prompt tells the model is not shown
    assert "area: attempt 1/3: no usable code in the answer" in terminal
    assert "Reply with" not in terminal and "```" not in terminal


def test_piped_progress_is_plain_lines_without_the_model_prompt(openai_server: FakeOpenAI,
                                                                project: Path) -> None:
    openai_server.queue(NO_CODE, AREA)
    done = subprocess.run([sys.executable, "-m", "pycapsule", "generate", f"{project}::area"],
                          env=environment(openai_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "\x1b[" not in done.stderr
    assert "pycapsule: area: attempt 1/3: no usable code in the answer" in done.stderr
    assert "Reply with" not in done.stderr
