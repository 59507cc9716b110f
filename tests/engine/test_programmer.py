"""The programmer agent against a real HTTP endpoint: streaming, usage, retries, clear errors, cancel."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from pycapsule.programmer import Cancelled, ModelError, ModelSettings, Programmer, Retrying
from pydantic import SecretStr

from tests.engine.conftest import FAKE_KEY
from tests.fakes.openai_server import Drop, Error, FakeOpenAI, Garbage, Hang, Text

MESSAGES = [{"role": "user", "content": "write f"}]


def programmer(url: str, **overrides: object) -> Programmer:
    settings = {"base_url": url, "model": "fake-coder", "api_key": SecretStr(FAKE_KEY), "timeout": 5.0,
                "retries": 2, "backoff": 0.01, "retry_after_cap": 0.2, **overrides}
    return Programmer(ModelSettings(**settings))  # type: ignore[arg-type]


def drain(gen):
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as done:
            return items, done.value


def test_streams_pieces_and_counts_usage_from_the_server(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("```python\ndef f():\n    return 1\n```", usage={
        "prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}))
    p = programmer(openai_server.base_url)
    pieces, reply = drain(p.stream(MESSAGES, temperature=0.4))
    assert "".join(pieces) == reply.text == "```python\ndef f():\n    return 1\n```"
    assert len(pieces) > 1
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.estimated) == (11, 7, False)
    assert (p.calls, p.usage.total_tokens) == (1, 18)
    body = openai_server.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.4 and body["model"] == "fake-coder"


def test_counts_tokens_itself_when_the_server_sends_no_usage(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("x" * 40, usage=None))
    reply = programmer(openai_server.base_url).complete(MESSAGES)
    assert reply.usage.estimated and reply.usage.completion_tokens == 5  # 40 characters in 8-char pieces


def test_rate_limit_is_retried_after_the_servers_delay(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(429, "slow down", headers={"Retry-After": "0.15"}), Text("ok"))
    items, reply = drain(programmer(openai_server.base_url).stream(MESSAGES))
    (retry,) = [i for i in items if isinstance(i, Retrying)]
    assert retry.delay == pytest.approx(0.15) and "429" in retry.reason
    assert reply.text == "ok"


def test_retry_after_is_capped(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(503, "busy", headers={"Retry-After": "3600"}), Text("ok"))
    items, _ = drain(programmer(openai_server.base_url).stream(MESSAGES))
    assert [i.delay for i in items if isinstance(i, Retrying)] == [0.2]


@pytest.mark.parametrize(("replies", "expected"), [
    ([Error(500, "boom")] * 3, "failed (500): boom (after 3 tries)"),
    ([Drop()] * 3, "cannot reach the model"),
    ([Garbage()] * 3, "cannot reach the model"),
    ([Text("  \n")] * 3, "sent an empty answer (after 3 tries)"),
])
def test_bounded_retries_then_one_line_error(openai_server: FakeOpenAI, replies: list, expected: str) -> None:
    openai_server.queue(*replies)
    with pytest.raises(ModelError) as error:
        programmer(openai_server.base_url).complete(MESSAGES)
    message = str(error.value)
    assert expected in message and "\n" not in message and FAKE_KEY not in message
    assert len(openai_server.chat_requests) == 3 and openai_server.pending == 0


def test_a_slow_model_times_out_with_a_clear_error(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Hang(), Hang())
    with pytest.raises(ModelError, match=r"did not answer within 0.3 s \(after 2 tries\)"):
        programmer(openai_server.base_url, timeout=0.3, retries=1).complete(MESSAGES)


def test_refused_connection() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(ModelError, match=rf"cannot reach the model at http://127.0.0.1:{port}/v1"):
        programmer(f"http://127.0.0.1:{port}/v1", retries=1).complete(MESSAGES)


def test_a_refused_key_is_not_retried_and_not_shown(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(401, f"invalid key {FAKE_KEY}"))
    with pytest.raises(ModelError) as error:
        programmer(openai_server.base_url).complete(MESSAGES)
    assert "refused the API key (401)" in str(error.value) and "$OPENAI_API_KEY" in str(error.value)
    assert FAKE_KEY not in str(error.value)
    assert len(openai_server.chat_requests) == 1
    assert openai_server.chat_requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"


def test_cancel_returns_quickly_while_the_model_is_silent(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Hang())
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        programmer(openai_server.base_url).complete(MESSAGES, cancel=cancel)
    assert time.monotonic() - started < 2


def test_cancel_between_streamed_pieces(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("y" * 400, chunk_delay=0.05))
    cancel = threading.Event()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 3:
            cancel.set()

    with pytest.raises(Cancelled):
        programmer(openai_server.base_url).complete(MESSAGES, on_token=on_token, cancel=cancel)
    assert len(seen) == 3


def test_without_a_model_name_the_endpoints_first_model_is_used(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("ok"))
    p = programmer(openai_server.base_url, model=None)
    assert p.complete(MESSAGES).model == "fake-coder"
    assert openai_server.chat_requests[0].body["model"] == "fake-coder"


def test_a_server_without_stream_options_is_asked_again_without_them(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(400, "Unrecognized request argument supplied: stream_options"),
                        Text("ok then", usage=None))
    p = programmer(openai_server.base_url)
    reply = p.complete(MESSAGES)
    assert reply.text == "ok then" and reply.usage.estimated
    first, second = openai_server.chat_requests
    assert "stream_options" in first.body and "stream_options" not in second.body


def test_other_client_errors_are_not_retried(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(404, "model 'nope' not found"))
    with pytest.raises(ModelError, match=r"does not know model 'fake-coder' \(404\)"):
        programmer(openai_server.base_url).complete(MESSAGES)
    assert len(openai_server.chat_requests) == 1
