"""`pycapsule model status` says how fast the shared model writes and reads (issue 68): from the `timings`
llama.cpp sends at the end of each answer, which the gate keeps for the last requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from pycapsule.embedded_model import runtime, shared
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.embedded_model.gate import KEPT, TimingsScanner
from pycapsule.embedded_model.shared import speed

TIMINGS = {"cache_n": 0, "prompt_n": 29, "prompt_ms": 2.5, "prompt_per_token_ms": 0.086,
           "prompt_per_second": 11600.0, "predicted_n": 5, "predicted_ms": 10.8,
           "predicted_per_token_ms": 2.16, "predicted_per_second": 462.9}


def sse_answer() -> bytes:
    """An answer as llama.cpp streams it: chunked SSE events, a token quoting the key, then the timings."""
    events = [{"choices": [{"delta": {"content": 'say "timings": {"prompt_n": 1}'}}]},
              {"choices": [], "usage": {"completion_tokens": 5}, "timings": TIMINGS}]
    body = b""
    for event in [*(json.dumps(event) for event in events), "[DONE]"]:
        data = f"data: {event}\n\n".encode()
        body += f"{len(data):x}\r\n".encode() + data + b"\r\n"
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + b"0\r\n\r\n"


def expected() -> dict[str, float]:
    return {name: float(TIMINGS[name]) for name in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")}


def test_the_timings_are_found_however_the_reads_split_them() -> None:
    answer = sse_answer()
    for cut in range(1, len(answer)):
        scanner = TimingsScanner()
        assert scanner.feed(answer[:cut]) + scanner.feed(answer[cut:]) == [expected()], cut
    scanner = TimingsScanner()
    one_byte_reads = [found for byte in range(len(answer)) for found in scanner.feed(answer[byte:byte + 1])]
    assert one_byte_reads == [expected()]


def test_two_answers_on_one_connection_are_two_requests() -> None:
    body = json.dumps({"choices": [], "timings": TIMINGS}).encode()
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    assert TimingsScanner().feed(plain + sse_answer()) == [expected(), expected()]


def test_the_rates_are_tokens_over_seconds_summed() -> None:
    timings = [{"prompt_n": 100, "prompt_ms": 1000, "predicted_n": 10, "predicted_ms": 1000},
               {"prompt_n": 1, "prompt_ms": 100, "predicted_n": 30, "predicted_ms": 2000}]
    found = speed(timings)
    assert found is not None
    assert (found.requests, found.writes_per_second, found.reads_per_second) == (2, 40 / 3, 101 / 1.1)
    assert found.sentence() == ("writes 13.3 tokens/s, reads 91.8 tokens/s "
                                "(llama.cpp's timings of its last 2 requests)")
    assert speed([]) is None and speed(None) is None and speed([{"prompt_n": "x"}]) is None


def test_a_server_of_an_older_pycapsule_is_said_to_keep_no_timings(runtime_dir: Path) -> None:
    """Its live file has no `timings`: "no request timed yet" would be wrong, it may have answered many."""
    state = runtime.ServerState(
        pid=os.getpid(), start_ticks=runtime.start_ticks(os.getpid()), base_url="http://127.0.0.1:9/v1",
        alias="m", model_path="m.gguf", model_size=1, model_mtime_ns=1, threads=1, idle_timeout=60.0,
        started=0.0)
    recorded = runtime.state_file(runtime_dir, "m")
    recorded.write_text(state.to_json())
    live = {"pid": os.getpid(), "open": 0, "idle": 1.0, "at": time.time()}
    try:
        runtime.live_file(runtime_dir, "m").write_text(json.dumps(live))
        [older] = shared.status(runtime_dir)
        assert (older.speed, older.keeps_timings) == (None, False)
        runtime.live_file(runtime_dir, "m").write_text(json.dumps({**live, "timings": []}))
        [newer] = shared.status(runtime_dir)
        assert (newer.speed, newer.keeps_timings) == (None, True)
    finally:
        recorded.unlink()  # it names this test's own process: the fixture must not stop it


def status(env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pycapsule", "model", "status", *flags], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def server_speed(env: dict[str, str], requests: int, within: float = 10.0,
                 written: int | None = None) -> dict[str, Any] | None:
    """The running server's `speed` in `model status --json` once it counts `requests` (and, when given,
    `written` tokens: the live file, written every half second, may still hold an earlier window of the same
    count)."""
    deadline = time.monotonic() + within
    while True:
        [server] = json.loads(status(env, "--json").stdout)["servers"]
        speed = server["speed"] or {}
        if speed.get("requests") == requests and written in (None, speed.get("written_tokens")):
            return server["speed"]
        if time.monotonic() > deadline:
            return server["speed"]
        time.sleep(0.2)


def test_status_says_the_speed_llama_cpp_measured_for_the_last_requests(
        tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYCAPSULE_CONFIG", str(tmp_path / "none.toml"))
    env = {**os.environ}
    endpoint = start_local_endpoint("tiny")
    assert server_speed(env, 0, within=1.0) is None
    assert f"{endpoint.model}: no request timed yet" in status(env).stdout
    client = OpenAI(base_url=endpoint.base_url, api_key="unused", max_retries=0, timeout=60)
    seen = []
    for number in range(KEPT + 2):  # more than are kept: the oldest go
        messages = [{"role": "user", "content": "hello " * (number + 1)}]
        if number % 2:
            chunks = list(client.chat.completions.create(model=endpoint.model, messages=messages,
                                                         max_tokens=4 + number, stream=True))
            seen.append(chunks[-1].model_extra["timings"])
        else:
            answer = client.chat.completions.create(model=endpoint.model, messages=messages,
                                                    max_tokens=4 + number)
            seen.append(answer.model_extra["timings"])
    kept = seen[-KEPT:]
    found = server_speed(env, KEPT, written=sum(entry["predicted_n"] for entry in kept))
    assert found is not None and found["requests"] == KEPT
    assert found["written_tokens"] == sum(entry["predicted_n"] for entry in kept)
    assert found["read_tokens"] == sum(entry["prompt_n"] for entry in kept)
    assert found["writes_tokens_per_second"] == pytest.approx(
        sum(entry["predicted_n"] for entry in kept) / sum(entry["predicted_ms"] for entry in kept) * 1000)
    assert found["reads_tokens_per_second"] == pytest.approx(
        sum(entry["prompt_n"] for entry in kept) / sum(entry["prompt_ms"] for entry in kept) * 1000)
    said = [line for line in status(env).stdout.splitlines() if "tokens/s" in line]
    assert said == [f"{endpoint.model}: writes {found['writes_tokens_per_second']:.1f} tokens/s, reads "
                    f"{found['reads_tokens_per_second']:.1f} tokens/s "
                    f"(llama.cpp's timings of its last {KEPT} requests)"]
