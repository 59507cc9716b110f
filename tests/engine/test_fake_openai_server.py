"""The scripted OpenAI server behaves like an endpoint to the real `openai` client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import openai
import pytest

from tests.fakes.openai_server import Drop, Error, FakeOpenAI, Garbage, Hang, Text


def client(server: FakeOpenAI, **kwargs: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-fake-test", max_retries=0, **kwargs)


def test_non_streaming_reply_and_recorded_request() -> None:
    with FakeOpenAI([Text("hello there")]) as server:
        reply = client(server).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "say hi"}])
        assert reply.choices[0].message.content == "hello there"
        assert reply.usage is not None and reply.usage.completion_tokens == 2
        (request,) = server.chat_requests
        assert request.body["messages"][0]["content"] == "say hi"
        assert request.headers["authorization"] == "Bearer sk-fake-test"


def test_streaming_sends_chunks_then_usage_when_asked() -> None:
    text = "```python\ndef f():\n    return 42\n```"
    with FakeOpenAI([Text(text), Text(text)]) as server:
        stream = client(server).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True,
            stream_options={"include_usage": True})
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == len(text.split())
        plain = list(client(server).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True))
        assert all(c.usage is None for c in plain)


def test_errors_are_http_statuses_with_headers() -> None:
    with FakeOpenAI([Error(429, "slow down", headers={"Retry-After": "3"}), Error(500, "boom")]) as server:
        with pytest.raises(openai.RateLimitError) as limited:
            client(server).chat.completions.create(model="m", messages=[])
        assert limited.value.response.headers["retry-after"] == "3"
        with pytest.raises(openai.InternalServerError, match="boom"):
            client(server).chat.completions.create(model="m", messages=[])


def test_empty_queue_fails_loudly() -> None:
    with FakeOpenAI() as server, pytest.raises(openai.InternalServerError, match="no scripted reply left"):
        client(server).chat.completions.create(model="m", messages=[])


@pytest.mark.parametrize("reply", [Drop(), Garbage()])
def test_broken_connections_are_connection_errors(reply: object) -> None:
    with FakeOpenAI([reply]) as server, pytest.raises(openai.APIConnectionError):
        client(server).chat.completions.create(model="m", messages=[])


def test_hang_times_out_on_the_client() -> None:
    with FakeOpenAI([Hang(5)]) as server, pytest.raises(openai.APITimeoutError):
        client(server, timeout=0.3).chat.completions.create(model="m", messages=[])


def test_a_client_under_test_can_see_that_its_request_hangs_at_the_model() -> None:
    with FakeOpenAI([Hang(5)]) as server:
        hanging = lambda: json.load(urllib.request.urlopen(f"{server.base_url}/_fake/hanging"))["hanging"]  # noqa: E731
        assert hanging() == 0
        with pytest.raises(openai.APITimeoutError):
            client(server, timeout=0.5).chat.completions.create(model="m", messages=[])
        assert hanging() == 1, "the timed-out request is still held until its Hang ends"


def test_drop_mid_stream_breaks_the_stream() -> None:
    with FakeOpenAI([Text("a" * 100, drop_after=2)]) as server:
        stream = client(server).chat.completions.create(model="m", messages=[], stream=True)
        with pytest.raises(openai.APIConnectionError):
            list(stream)


def test_smart_mode_answers_from_the_request() -> None:
    with FakeOpenAI(responder=lambda r: Text(f"you said {r.messages[-1]['content']}")) as server:
        reply = client(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "7"}])
        assert reply.choices[0].message.content == "you said 7"


def test_models_endpoint() -> None:
    with FakeOpenAI() as server:
        assert [m.id for m in client(server).models.list()] == ["fake-coder"]


def test_runs_as_a_separate_process(tmp_path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "from a script"}, {"status": 503, "message": "down"}]))
    record = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--script", str(script),
         "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        c = openai.OpenAI(base_url=base_url, api_key="sk-x", max_retries=0)
        assert c.chat.completions.create(model="m", messages=[]).choices[0].message.content == "from a script"
        with pytest.raises(openai.InternalServerError):
            c.chat.completions.create(model="m", messages=[])
        recorded = [json.loads(line) for line in record.read_text().splitlines()]
        assert [r["path"] for r in recorded] == ["/v1/chat/completions"] * 2
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0
