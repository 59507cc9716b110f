"""`fast_forward_echo`: an answer that starts repeating the function's signature and docstring is ended after
a few lines of it, and a second request asks the model to go on from the answer with the rest of the head
already written, which the model reads (fast) instead of writing (slow). An answer that starts copying the
module's code the prompt shows goes on, likewise, from a code block that holds the function's head instead.
The scripted endpoint streams like a slow local model; the real `openai` client, sandbox and loop run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pycapsule.events import TokensStreamed
from pycapsule.sandbox.api import Sandbox

from tests.engine.test_loop import run
from tests.fakes.openai_server import FakeOpenAI, Text
from tests.unit.test_echo import MODULE as FEES

MODULE = f"{FEES}    ...\n"
HEAD = MODULE[MODULE.index("def late_fee"): MODULE.index("    ...")]
BODY = "    return min(days * RATE, 10.0)\n```\n"
SLOW = 0.2
"""Seconds between two streamed pieces of the echoing answer: its whole head would take ~10 s."""


def fees(folder: Path, source: str) -> Path:
    path = folder / "fees.py"
    path.write_text(source)
    return path


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    return fees(tmp_path, MODULE)


def test_the_echo_is_cut_and_the_model_goes_on_from_the_whole_head(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(Text(f"```python\n{HEAD}{BODY}", chunk_delay=SLOW), Text(BODY))
    began = time.monotonic()
    events, outcome = run(openai_server, sandbox, module_file, "late_fee", fast_forward_echo="always")
    assert outcome.status == "passed", outcome.message
    assert time.monotonic() - began < 8, "the slow echo was not read to its end"
    first, going_on = openai_server.chat_requests
    assert first.messages[-1]["role"] == "user"
    assert going_on.messages[:-1] == first.messages
    assert going_on.messages[-1] == {"role": "assistant", "content": f"```python\n{HEAD}"}
    streamed = "".join(event.text for event in events if isinstance(event, TokensStreamed))
    assert streamed == f"```python\n{HEAD}{BODY}", "the answer streams as one, the given rest included"
    assert outcome.new_source == MODULE.replace("    ...\n", "    return min(days * RATE, 10.0)\n")


def test_the_two_requests_count_as_one_answer_within_its_token_limit(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    last = BODY.removesuffix("\n")  # read to its end, so that its usage comes
    openai_server.queue(f"```python\n{HEAD}{BODY}",
                        Text(last, usage={"prompt_tokens": 380, "completion_tokens": 12}))
    _, outcome = run(openai_server, sandbox, module_file, "late_fee", fast_forward_echo="always",
                     max_tokens=100)
    assert outcome.status == "passed", outcome.message
    # the first request was ended before its usage came: its pieces are counted here
    written_first = outcome.usage.completion_tokens - 12
    assert written_first > 0 and outcome.usage.prompt_tokens > 380
    assert openai_server.chat_requests[1].body["max_tokens"] == 100 - written_first, "what the first left"


def test_an_answer_that_leaves_the_docstring_is_read_as_it_comes(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    own_words = HEAD.replace("capped at 10.0 after 20 days.", "at most 10.0.")
    openai_server.queue(f"```python\n{own_words}{BODY}")
    _, outcome = run(openai_server, sandbox, module_file, "late_fee", fast_forward_echo="always")
    assert outcome.status == "passed", outcome.message
    assert len(openai_server.chat_requests) == 1


@pytest.mark.parametrize("setting", ["never", "embedded"])
def test_an_endpoint_is_not_asked_to_go_on_unless_the_user_says_always(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, setting: str) -> None:
    openai_server.queue(f"```python\n{HEAD}{BODY}")
    _, outcome = run(openai_server, sandbox, module_file, "late_fee", fast_forward_echo=setting)
    assert outcome.status == "passed", outcome.message
    assert len(openai_server.chat_requests) == 1


TABLE = "".join(f"HOLIDAY_{n} = ('a holiday of the library', {n})\n" for n in range(24))
COPYING = f"{FEES.replace('RATE = 0.5', 'RATE = 0.5' + chr(10) + TABLE)}    ...\n"


@pytest.fixture
def copying_module(tmp_path: Path) -> Path:
    """A module whose constants the prompt shows as the function's context: an answer may copy them."""
    return fees(tmp_path, COPYING)


def test_an_answer_copying_the_modules_code_goes_on_from_the_functions_head_instead(
        openai_server: FakeOpenAI, sandbox: Sandbox, copying_module: Path) -> None:
    openai_server.queue(Text(f"Here it is:\n```python\nRATE = 0.5\n{TABLE}", chunk_delay=0.01), Text(BODY))
    _, outcome = run(openai_server, sandbox, copying_module, "late_fee", fast_forward_echo="always")
    assert outcome.status == "passed" and outcome.attempts == 1, outcome.message
    first, going_on = openai_server.chat_requests
    assert "HOLIDAY_23" in first.prompt_text, "the prompt shows the module's code"
    assert going_on.messages[:-1] == first.messages
    head = COPYING[COPYING.index("def late_fee"): COPYING.index("    ...")]
    assert going_on.messages[-1] == {"role": "assistant", "content": f"Here it is:\n```python\n{head}"}
    assert outcome.new_source == COPYING.replace("    ...\n", "    return min(days * RATE, 10.0)\n")


def test_without_the_fast_forward_a_copying_answer_is_an_attempt_lost(
        openai_server: FakeOpenAI, sandbox: Sandbox, copying_module: Path) -> None:
    openai_server.queue(f"```python\nRATE = 0.5\n{TABLE}", f"```python\n{HEAD}{BODY}")
    _, outcome = run(openai_server, sandbox, copying_module, "late_fee", fast_forward_echo="never")
    assert outcome.status == "passed" and outcome.attempts == 2, outcome.message
    assert [request.messages[-1]["role"] for request in openai_server.chat_requests] == ["user", "user"]
    assert "does not define the function late_fee" in openai_server.chat_requests[1].prompt_text
