"""`pycapsule generate`'s progress shows each phase of an attempt with its figures, within a second of its
start (issue 48 item 3): reading the prompt, writing, running the examples; in plain lines (a pipe) and
on the live line (a terminal). A request with no progress says why while it is still pending, then
ends the normal way."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from pycapsule.exit_codes import ExitCode

from tests.engine import test_generate_ends_early as ends_early
from tests.engine.test_generate_cli import AREA
from tests.engine.test_generate_ends_early import environment, run_on_a_terminal
from tests.fakes.openai_server import Delay, FakeOpenAI, Hang, Text

project = ends_early.project  # the fixture: a module of three stubs

SLOW_AREA = AREA.replace("def area(r):\n", "def area(r):\n    # " + "the area of a disc " * 6 + "\n")
"""An answer that streams for about a second at 0.03 s a piece."""


def follow(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], list[tuple[float, str]]]:
    """The process and its stderr lines as they come, each with when it came (seconds since the start)."""
    began = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append((time.monotonic() - began, line.rstrip("\n")))

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def test_plain_progress_shows_each_phase_in_order_as_it_starts(openai_server: FakeOpenAI, project: Path):
    openai_server.queue(Delay(1.5, Text(SLOW_AREA, chunk_delay=0.03)))
    process, lines = follow([sys.executable, "-m", "pycapsule", "generate", f"{project}::area"],
                            environment(openai_server))
    assert process.wait(120) == ExitCode.OK, lines
    time.sleep(0.2)
    said = [text.removeprefix("pycapsule: ") for _, text in lines]
    wanted = ["area: attempt 1/3: generating", "area: attempt 1/3: connecting to the model: 0 s",
              "area: attempt 1/3: reading the prompt: 0 s", "area: attempt 1/3: writing: 1 token",
              "area: attempt 1/3: running 2 examples"]
    assert [line for line in said if line in wanted] == wanted, said
    at = {text.removeprefix("pycapsule: "): when for when, text in lines}
    # each phase is said as it starts: connecting with the attempt, writing with the first token, 1.5 s
    # after the request was sent
    assert at[wanted[1]] - at[wanted[0]] < 1.0, lines
    assert at[wanted[3]] - at[wanted[2]] >= 1.4, lines
    assert said[-1].startswith("passed: area:"), said


def test_the_live_line_shows_the_phase_with_its_figures(openai_server: FakeOpenAI, project: Path):
    openai_server.queue(Delay(1.5, Text(SLOW_AREA, chunk_delay=0.03)))
    code, raw = run_on_a_terminal(openai_server, project)
    terminal = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert code == ExitCode.OK, terminal
    reading = r"area: attempt 1/3: generating · reading the prompt: 1 s · \d+\.\d s"
    assert re.search(reading, terminal), terminal
    assert re.search(r"area: attempt 1/3: generating · writing: \d+ tokens, \d+ tokens/s · \d+\.\d s",
                     terminal), terminal


def test_a_stalled_request_says_why_while_pending_then_times_out_as_before(openai_server: FakeOpenAI,
                                                                           project: Path):
    openai_server.queue(Hang())
    env = {**environment(openai_server), "PYCAPSULE_STALL_NOTICE": "1"}
    process, lines = follow([sys.executable, "-m", "pycapsule", "generate", f"{project}::area",
                             "--inactivity-timeout", "4"], env)
    deadline = time.monotonic() + 60
    stalled: list[str] = []
    while not stalled and time.monotonic() < deadline and process.poll() is None:
        stalled = [text for _, text in lines if "nothing has moved" in text]
        time.sleep(0.05)
    assert stalled, lines
    assert openai_server.hanging == 1, "said while the request was still pending"
    (line,) = stalled
    assert re.fullmatch(r"pycapsule: area: attempt 1/3: reading the prompt: 1 s; nothing has moved for 1 s: "
                        r"the model at http://127\.0\.0\.1:\d+/v1 has sent nothing; it is busy or queueing "
                        r"the request \(nothing here can tell which\); still waiting, up to "
                        r"inactivity_timeout = 4 s of silence", line), line
    assert process.wait(60) == ExitCode.MODEL_UNAVAILABLE
    time.sleep(0.2)
    said = "\n".join(text for _, text in lines)
    assert "sent nothing for 4 s; check that it is running and not overloaded" in said, said
    assert len(openai_server.chat_requests) == 1
