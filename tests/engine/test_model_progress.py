"""A model request's phases and figures (`Programmer.stream(progress=True)`, model_progress.py) against the
scripted endpoint: llama.cpp's prompt counts, the writing rate, the heartbeat, and a stalled request that
says why while it is still pending, then ends the normal way."""

from __future__ import annotations

import os
import re
import time

import pytest
from pycapsule import model_progress
from pycapsule.event_text import phase
from pycapsule.generators import Returning
from pycapsule.model_client import EndpointError, ModelError
from pycapsule.model_progress import Progress

from tests.engine.test_model_client import MESSAGES, programmer
from tests.fakes.openai_server import Delay, FakeOpenAI, Hang, Text

CODE = "```python\ndef f():\n    return 1\n```"
LONG = "```python\ndef f():\n    # " + "one step at a time " * 12 + "\n    return 1\n```"  # ~30 pieces


def timed(stream) -> tuple[list[tuple[float, object]], object]:
    """Every item the stream yields with when it came (seconds since the start), and the reply."""
    began = time.monotonic()
    answer = Returning(stream)
    items = [(time.monotonic() - began, item) for item in answer]
    return items, answer.value


def phases(items: list[tuple[float, object]]) -> list[Progress]:
    return [item for _, item in items if isinstance(item, Progress)]


def test_the_embedded_model_s_prompt_counts_then_the_writing_are_shown_in_order(openai_server: FakeOpenAI):
    openai_server.queue(Text(LONG, prompt_tokens=1300, prompt_seconds=0.4, chunk_delay=0.04))
    items, reply = timed(programmer(openai_server.base_url, local=True).stream(MESSAGES, progress=True))
    assert "return 1" in reply.text
    assert openai_server.chat_requests[0].body["return_progress"] is True
    shown = phases(items)
    order = [p.phase for p in shown]
    assert order[0] == "waiting" and "reading" in order and order[-1] == "writing"
    assert order.index("reading") < order.index("writing")
    reading = [p for p in shown if p.phase == "reading"]
    assert [p.done for p in reading if p.total] [:4] == [0, 512, 1024, 1300]
    assert all(p.total == 1300 for p in reading)
    after_a_batch = next(p for p in reading if p.done == 512)
    assert after_a_batch.rate and 500 < after_a_batch.rate < 2000  # 512 tokens in ~0.4 s
    assert after_a_batch.left is not None and 0.2 < after_a_batch.left < 1.2  # 788 tokens at that rate
    assert phase(after_a_batch).startswith("reading the prompt: 512 of 1,300 tokens, ~")
    writing = [p for p in shown if p.phase == "writing"]
    assert writing[0].done == 1 and writing[-1].done and writing[-1].done > 1
    assert any(p.rate for p in writing) and "tokens/s" in phase(writing[-1])
    # the text still streams whole, after the progress of each piece
    assert "".join(item for _, item in items if isinstance(item, str)) == reply.text


def test_another_endpoint_shows_the_phase_without_figures_and_is_not_sent_llama_cpp_options(
        openai_server: FakeOpenAI):
    openai_server.queue(Delay(1.3, Text(CODE)))
    items, _ = timed(programmer(openai_server.base_url).stream(MESSAGES, progress=True))
    assert "return_progress" not in openai_server.chat_requests[0].body
    reading = [(at, p) for at, p in items if isinstance(p, Progress) and p.phase == "reading"]
    assert reading[0][0] < 0.5 and reading[0][1].total is None  # at once, no counts
    assert [p.seconds for _, p in reading][-1] >= 1.0  # the heartbeat: the seconds go on
    assert phase(reading[-1][1]) == f"reading the prompt: {reading[-1][1].seconds:.0f} s"


def test_without_progress_the_stream_is_text_only(openai_server: FakeOpenAI):
    openai_server.queue(Text(CODE, prompt_tokens=600))
    items, _ = timed(programmer(openai_server.base_url, local=True).stream(MESSAGES))
    assert all(isinstance(item, str) for _, item in items)


def test_a_silent_endpoint_says_why_while_the_request_is_pending_then_times_out(openai_server: FakeOpenAI):
    openai_server.queue(Hang())
    stream = programmer(openai_server.base_url, stall_notice=0.6, inactivity_timeout=2.0,
                        retries=0).stream(MESSAGES, progress=True)
    began = time.monotonic()
    seen: list[tuple[float, Progress]] = []
    with pytest.raises(EndpointError, match="sent nothing for 2 s") as failure:
        for item in stream:
            if isinstance(item, Progress):
                seen.append((time.monotonic() - began, item))
    stalled = [(at, p) for at, p in seen if p.stalled]
    assert stalled, seen
    at, first = stalled[0]
    assert 0.5 < at < 1.5 and openai_server.hanging == 1  # said while the request was still pending
    assert re.match(r"nothing has moved for \d s: the model at http://127\.0\.0\.1:\d+/v1 has sent nothing",
                    first.stalled), first.stalled
    assert "has sent nothing" in first.stalled and "inactivity_timeout = 2 s" in first.stalled
    assert time.monotonic() - began >= 2.0 and "check that it is running" in str(failure.value)


class Probe:
    """A stand-in for the embedded model's server: a process to watch and how it stopped."""

    def __init__(self, pid: int, error: str | None = None) -> None:
        self.pid, self._error = pid, error

    def error(self, grace: float = 0.0) -> str | None:
        return self._error


def local_programmer(url: str, probe: Probe, **overrides: object):
    return programmer(url, probe, local=True, **overrides)  # the server: what ModelSource gives it


def test_a_stalled_local_request_on_a_busy_machine_says_so_and_goes_on(openai_server: FakeOpenAI,
                                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(model_progress, "machine_load", lambda: (7.9, 2))
    openai_server.queue(Delay(1.5, Text(CODE)))
    stream = local_programmer(openai_server.base_url, Probe(os.getppid()), stall_notice=0.5).stream(
        MESSAGES, progress=True)
    items, reply = timed(stream)
    assert "return 1" in reply.text  # the request went on to its answer
    stalled = [p.stalled for p in phases(items) if p.stalled]
    assert stalled and stalled[0].startswith("nothing has moved for "), stalled
    assert "s: the machine is busy (load 7.9 on 2 cores, and the model got 0.0 of a core)" in stalled[0]
    assert stalled[0].endswith("still waiting, up to request_timeout = 10 s")


def test_a_model_server_found_dead_ends_the_request_at_once(openai_server: FakeOpenAI):
    openai_server.queue(Hang())
    probe = Probe(1, "the local model server stopped unexpectedly: out of memory.")
    stream = local_programmer(openai_server.base_url, probe, stall_notice=0.5, request_timeout=30.0)
    began = time.monotonic()
    with pytest.raises(ModelError, match="the local model server stopped unexpectedly: out of memory"):
        timed(stream.stream(MESSAGES, progress=True))
    assert time.monotonic() - began < 5, "it did not wait out request_timeout"
