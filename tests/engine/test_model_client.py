"""The programmer agent against a real HTTP endpoint: streaming, usage, retries, timeouts, errors in the
user's words, cancel."""

from __future__ import annotations

import re
import socket
import threading
import time

import pytest
from pycapsule.debugging.answer_watch import COPIED_LINES, AnswerTarget
from pycapsule.generators import Returning
from pycapsule.model_choice import HOSTED_OPENAI_DEFAULT, choose_model
from pycapsule.model_client import (
    Cancelled,
    EndpointError,
    ModelError,
    ModelSettings,
    Programmer,
    Reply,
    Retrying,
)
from pycapsule.model_progress import ServerProbe
from pydantic import SecretStr

from tests.engine.conftest import FAKE_KEY
from tests.fakes.openai_server import Delay, Drop, Error, FakeOpenAI, Garbage, Hang, Text

MESSAGES = [{"role": "user", "content": "write f"}]


def programmer(url: str, server: ServerProbe | None = None, **overrides: object) -> Programmer:
    settings = {"base_url": url, "model": "fake-coder", "api_key": SecretStr(FAKE_KEY),
                "request_timeout": 10.0, "inactivity_timeout": 5.0, "retries": 2, "backoff": 0.01,
                "retry_after_cap": 0.2, **overrides}
    return Programmer(ModelSettings(**settings), server=server)  # type: ignore[arg-type]


def drain(gen):
    answer = Returning(gen)
    return list(answer), answer.value


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
    ([Error(500, "boom")] * 3, "failed (500: boom) (after 3 tries); check the server's log."),
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


def test_an_endpoint_that_never_answers_is_given_up_after_the_inactivity_timeout_once(
        openai_server: FakeOpenAI) -> None:
    """A silent endpoint already had its inactivity window: asking again would only multiply the wait."""
    openai_server.queue(Hang(), Hang())
    with pytest.raises(EndpointError, match=r"sent nothing for 0.3 s; check that it is running"):
        programmer(openai_server.base_url, inactivity_timeout=0.3, retries=3).complete(MESSAGES)
    assert len(openai_server.chat_requests) == 1


def test_an_answer_that_stalls_mid_stream_is_given_up_after_the_inactivity_timeout(
        openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("```python\ndef f():\n    return 1\n```", stall_after=2))
    seen: list[str] = []
    with pytest.raises(EndpointError, match=r"stopped sending its answer for 0.3 s"):
        programmer(openai_server.base_url, inactivity_timeout=0.3).complete(MESSAGES, on_token=seen.append)
    assert len(seen) == 2 and len(openai_server.chat_requests) == 1


def test_the_embedded_models_own_server_may_be_silent_while_it_reads_a_long_prompt(
        openai_server: FakeOpenAI) -> None:
    """On a busy CPU the local server can take longer than the inactivity window to read the prompt; it is
    working, not hung (were it dead the connection would drop), so only the total budget bounds that."""
    openai_server.queue(Delay(1.0, Text("```python\ndef f():\n    return 1\n```")))
    reply = programmer(openai_server.base_url, inactivity_timeout=0.3, local=True).complete(MESSAGES)
    assert "return 1" in reply.text
    openai_server.queue(Delay(1.0, Text("```python\ndef f():\n    return 1\n```")))
    with pytest.raises(EndpointError, match=r"sent nothing for 0.3 s"):
        programmer(openai_server.base_url, inactivity_timeout=0.3).complete(MESSAGES)


def test_a_silent_local_server_is_given_up_at_the_total_budget(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Hang())
    with pytest.raises(EndpointError, match=r"did not finish its answer within 0.8 s"):
        programmer(openai_server.base_url, inactivity_timeout=0.3, request_timeout=0.8, local=True
                   ).complete(MESSAGES)


def test_a_local_server_that_stalls_mid_answer_is_given_up_after_the_inactivity_timeout(
        openai_server: FakeOpenAI) -> None:
    openai_server.queue(Text("```python\ndef f():\n    return 1\n```", stall_after=2))
    with pytest.raises(EndpointError, match=r"stopped sending its answer for 0.3 s"):
        programmer(openai_server.base_url, inactivity_timeout=0.3, local=True).complete(MESSAGES)


def test_a_slow_but_steady_answer_is_cut_off_by_the_total_budget_and_kept(openai_server: FakeOpenAI) -> None:
    """Tokens keep coming, so the endpoint is fine; the attempt is simply too long. What came is the
    answer, marked cut off, with the tokens counted (the stream ended before the server's own usage)."""
    openai_server.queue(Text("y" * 4000, chunk_delay=0.02))
    reply = programmer(openai_server.base_url, request_timeout=0.5, inactivity_timeout=5.0).complete(MESSAGES)
    assert reply.timed_out and 0 < len(reply.text) < 4000
    assert reply.usage.estimated and reply.usage.completion_tokens > 0


def test_a_retry_never_goes_past_the_total_budget(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Error(503, "busy", headers={"Retry-After": "20"}), Text("ok"))
    started = time.monotonic()
    with pytest.raises(EndpointError, match=r"no time left for another within request_timeout = 2 s"):
        programmer(openai_server.base_url, request_timeout=2.0, retry_after_cap=30.0).complete(MESSAGES)
    assert len(openai_server.chat_requests) == 1 and time.monotonic() - started < 2.0


def test_the_clocks_come_from_the_settings() -> None:
    from pycapsule.config import Settings

    model = ModelSettings.from_settings(Settings(inactivity_timeout=7.0, request_timeout=42.0))
    assert (model.inactivity_timeout, model.request_timeout) == (7.0, 42.0)


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
    assert "refused the API key (401: invalid key ***)" in str(error.value)
    assert str(error.value).endswith("check $OPENAI_API_KEY.")
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
    with pytest.raises(EndpointError, match=r"does not know model 'fake-coder' \(404: model 'nope' not "):
        programmer(openai_server.base_url).complete(MESSAGES)
    assert len(openai_server.chat_requests) == 1


# ---- errors in the user's words: what happened and what to check, in one sentence -----------------

JARGON = re.compile(r"httpx|httpcore|openai\.|APIConnectionError|APIStatusError|APITimeoutError|"
                    r"ConnectError|RemoteProtocolError|Traceback|<[a-z!/]", re.IGNORECASE)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def assert_one_plain_sentence(message: str) -> None:
    assert "\n" not in message and message.endswith(".") and len(message) < 400, message
    assert not JARGON.search(message), message
    assert "; check" in message or "; raise" in message or "; wait" in message, message


def test_connection_refused_in_user_words() -> None:
    port = closed_port()
    with pytest.raises(EndpointError) as error:
        programmer(f"http://127.0.0.1:{port}/v1", retries=0).complete(MESSAGES)
    message = str(error.value)
    assert message == (f"cannot reach the model at http://127.0.0.1:{port}/v1: connection refused; "
                       "check that the server is running and that base_url is right.")
    assert_one_plain_sentence(message)


HTML_PAGE = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{color:red}</style>"
             "</head><body><h1>Bad Gateway</h1><p>nginx/1.25.3</p>" + "<p>padding</p>" * 200
             + "</body></html>")


@pytest.mark.parametrize(("reply", "expected"), [
    (Error(401, "Incorrect API key provided"), "refused the API key (401: Incorrect API key provided)"),
    (Error(404, "The model `fake-coder` does not exist"), "does not know model 'fake-coder' (404: The model"),
    (Error(500, body=HTML_PAGE, content_type="text/html"), "failed (500: 502 Bad Gateway)"),
    (Hang(), "sent nothing for 0.3 s"),
])
def test_endpoint_failures_in_user_words(openai_server: FakeOpenAI, reply: object, expected: str) -> None:
    openai_server.queue(reply)
    with pytest.raises(EndpointError) as error:
        programmer(openai_server.base_url, retries=0, inactivity_timeout=0.3).complete(MESSAGES)
    message = str(error.value)
    assert expected in message
    assert_one_plain_sentence(message)
    assert "padding" not in message and "nginx" not in message


def test_credentials_in_the_url_never_appear_in_an_error() -> None:
    port = closed_port()
    with pytest.raises(EndpointError) as error:
        url = f"http://alice:hunter2@127.0.0.1:{port}/v1?api_key=sk-in-query"
        programmer(url, retries=0).complete(MESSAGES)
    message = str(error.value)
    assert "hunter2" not in message and "alice" not in message and "sk-in-query" not in message
    assert f"http://***@127.0.0.1:{port}/v1" in message


def test_a_bad_address_says_so_when_listing_models() -> None:
    """No model name: the endpoint is asked for its list; its failure is named first, not "no model set"."""
    port = closed_port()
    with pytest.raises(EndpointError) as error:
        programmer(f"http://127.0.0.1:{port}/v1", model=None).complete(MESSAGES)
    message = str(error.value)
    assert message.startswith(f"cannot reach the model at http://127.0.0.1:{port}/v1: connection refused")
    assert "--model or PYCAPSULE_MODEL" not in message  # naming a model would not help: the server is down
    assert not JARGON.search(message)


def test_an_answer_that_keeps_repeating_itself_is_ended_early(openai_server: FakeOpenAI) -> None:
    looping = "```python\n" + "from itertools import chain\nfrom operator import add\n" * 400
    openai_server.queue(Text(looping, usage=None))
    p = programmer(openai_server.base_url)
    pieces, reply = drain(p.stream(MESSAGES))
    assert reply.looped and not reply.truncated
    assert reply.text == "".join(pieces) and len(reply.text) < len(looping) // 10
    assert p.calls == 1 and reply.usage.estimated


def test_reading_stops_once_the_answers_function_is_complete(openai_server: FakeOpenAI) -> None:
    code = "```python\ndef f():\n    return 1\n```\n"
    openai_server.queue(Text(code + "This returns one, as asked. " * 300, usage=None))
    p = programmer(openai_server.base_url)
    pieces, reply = drain(p.stream(MESSAGES, target=AnswerTarget("f")))
    assert reply.ended_at_code_end and reply.text == code
    assert len("".join(pieces)) < len(code) + 100  # what was read past the fence: at most a line's pieces


def test_an_answer_that_copies_the_prompts_context_is_ended(openai_server: FakeOpenAI) -> None:
    context = "".join(f"TABLE_{n} = ('a row of the module', {n})\n" for n in range(60))
    openai_server.queue(Text(f"```python\n{context}", usage=None))
    target = AnswerTarget("f", "", context)
    _, reply = drain(programmer(openai_server.base_url).stream(MESSAGES, target=target))
    assert reply.copied and reply.text.count("TABLE_") == COPIED_LINES


def test_the_embedded_model_is_named_as_such_not_by_its_port() -> None:
    port = closed_port()
    with pytest.raises(EndpointError) as error:
        programmer(f"http://127.0.0.1:{port}/v1", retries=0,
                   label="embedded Qwen2.5-Coder 1.5B").complete(MESSAGES)
    assert str(error.value) == ("cannot reach the embedded Qwen2.5-Coder 1.5B: connection refused; it may "
                                "have stopped: run again (it restarts by itself).")


@pytest.mark.parametrize(("local", "cache", "temperature", "asked"), [
    (True, True, 0.5, True),
    (True, True, 0.0, False),
    (True, False, 0.5, False),
    (False, True, 0.5, False),
], ids=["sampled, embedded", "greedy", "setting off", "another endpoint"])
def test_only_a_sampled_request_to_the_embedded_model_asks_for_the_prompt_cache(
        openai_server: FakeOpenAI, local: bool, cache: bool, temperature: float, asked: bool) -> None:
    """A greedy answer must depend on its prompt alone, so greedy requests never reuse a cached prefix;
    `cache_prompt` is llama.cpp's own option, sent to no other endpoint."""
    openai_server.queue(Text("ok"))
    programmer(openai_server.base_url, local=local, cache_sampled_prompts=cache).complete(
        MESSAGES, temperature=temperature)
    body = openai_server.chat_requests[0].body
    assert ("cache_prompt" in body) is asked
    assert body.get("cache_prompt", True) is True


def test_the_prompt_tokens_taken_from_the_endpoints_cache_are_counted(openai_server: FakeOpenAI) -> None:
    usage = {"prompt_tokens": 1100, "completion_tokens": 8, "total_tokens": 1108,
             "prompt_tokens_details": {"cached_tokens": 1074}}
    openai_server.queue(Text("ok", usage=usage), Text("ok"))  # type: ignore[arg-type]
    p = programmer(openai_server.base_url)
    first, second = p.complete(MESSAGES), p.complete(MESSAGES)
    assert (first.usage.prompt_tokens, first.usage.cached_tokens) == (1100, 1074)
    assert second.usage.cached_tokens == 0
    assert p.usage.cached_tokens == 1074


NOT_CHAT = ("dall-e-3", "gpt-image-1", "tts-1-hd", "whisper-1", "gpt-4o-transcribe", "text-embedding-3-small",
            "omni-moderation-latest", "gpt-4o-realtime-preview", "gpt-4o-audio-preview", "sora-2")


def test_with_no_model_named_the_requests_go_to_the_first_model_that_can_chat() -> None:
    with FakeOpenAI(models=(*NOT_CHAT, "qwen2.5-coder-7b", "llama-3-8b")) as server:
        server.queue(Text("```python\ndef f():\n    return 1\n```"))
        reply = programmer(server.base_url, model=None).complete(MESSAGES)
        assert reply.model == "qwen2.5-coder-7b"
        assert server.chat_requests[0].body["model"] == "qwen2.5-coder-7b"


def test_an_endpoint_listing_only_models_that_cannot_chat_gets_a_sentence_naming_the_way_out() -> None:
    with FakeOpenAI(models=NOT_CHAT) as server:
        with pytest.raises(EndpointError) as error:
            programmer(server.base_url, model=None).complete(MESSAGES)
        message = str(error.value)
        assert "none of them can chat" in message and "--model or PYCAPSULE_MODEL" in message
        assert server.chat_requests == []


@pytest.mark.parametrize(("listed", "base_url", "chosen"), [
    ((*NOT_CHAT, "gpt-3.5-turbo", HOSTED_OPENAI_DEFAULT, "gpt-4o"), None, HOSTED_OPENAI_DEFAULT),
    ((*NOT_CHAT, "gpt-3.5-turbo", HOSTED_OPENAI_DEFAULT), "https://api.openai.com/v1", HOSTED_OPENAI_DEFAULT),
    ((*NOT_CHAT, "gpt-4o", "gpt-4o-mini"), None, "gpt-4o"),  # the key may not use the default: a chat model
    (("gpt-3.5-turbo", HOSTED_OPENAI_DEFAULT), "http://127.0.0.1:8080/v1", "gpt-3.5-turbo"),
])
def test_on_the_hosted_openai_api_the_documented_default_chat_model_is_asked(
        listed: tuple[str, ...], base_url: str | None, chosen: str) -> None:
    assert choose_model(listed, base_url) == chosen


def test_an_answers_time_budget_starts_when_it_has_the_endpoints_turn(openai_server: FakeOpenAI) -> None:
    """An endpoint that answers one request at a time: the second request waits for the first, and that wait
    is not taken from its own `request_timeout`."""
    client = programmer(openai_server.base_url, one_at_a_time=True, request_timeout=2.0)
    first_text, second_text = "first " * 21, "second " * 18  # 16 streamed pieces each: ~1.6 s
    openai_server.queue(Text(first_text, chunk_delay=0.1), Text(second_text, chunk_delay=0.1))
    replies: list[Reply] = []
    first = threading.Thread(target=lambda: replies.append(client.complete(MESSAGES)))
    first.start()
    time.sleep(0.2)  # the first has the turn
    second = client.complete(MESSAGES)
    first.join()
    assert not replies[0].timed_out
    assert not second.timed_out and second.text == second_text, "it waited ~1.4 s for its turn, then answered"
