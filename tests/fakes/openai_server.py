"""A scripted OpenAI-compatible HTTP server on 127.0.0.1: the one test double at the network edge.

The real `openai` client talks real HTTP to it (keep-alive, chunked SSE streaming), so everything
above the socket is exercised for real. Each test queues the replies it expects to be asked for and
then asserts on the requests it recorded.

Endpoints
    POST /v1/chat/completions   answers with the next scripted reply, streaming (SSE `data: {...}`
                                chunks, then `data: [DONE]`) when the body says `"stream": true`;
                                the final chunk carries `usage` when `stream_options.include_usage`.
    GET  /v1/models             lists `models` (default: "fake-coder").

Scripted replies (queue them in the order they will be asked for)
    Text("```python\\n...```")          a normal answer; `usage=None` omits usage, `usage={...}` sets it,
                                        `finish_reason="length"` marks a truncated answer,
                                        `chunk_delay` slows the stream, `drop_after=N` cuts the
                                        connection after N content chunks, `stall_after=N` goes
                                        silent after N content chunks (until the server stops, or
                                        `stall_seconds`, then cuts the connection);
                                        `prompt_tokens=N` answers a request that asks for
                                        `return_progress` (llama.cpp's option) with its
                                        `prompt_progress` chunks first: 0, then every 512 tokens
                                        read, one batch per `prompt_seconds`.
    Error(429, "slow down", headers={"Retry-After": "1"})   an HTTP error with an OpenAI-style JSON body
                                        (`body=` a raw body instead, sent as `content_type`).
    Hang(seconds=None)                  waits (until the server stops, or `seconds`) before answering
                                        nothing: for request timeouts and cancellation.
    Drop()                              closes the connection without a response.
    Garbage(b"...")                     writes raw bytes that are not HTTP, then closes.
    Delay(seconds, reply)               waits, then plays `reply`.
When the queue is empty the server answers 500 "fake OpenAI server: no scripted reply left ..." so a
test that forgot a reply fails loudly. A "smart" mode instead calls `responder(request) -> reply`
for every chat request (a `RecordedRequest` in, any reply above or a plain string out).

In-process use
    with FakeOpenAI() as server:                 # or the `openai_server` pytest fixture
        server.queue(Text("```python\\ndef f(): return 1\\n```"), Error(500, "boom"))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-fake")
        ...
        server.requests[0].body["messages"]; server.requests[0].headers["authorization"]

From another process (editor tests)
    python -m tests.fakes.openai_server --port 0 --script replies.json [--record requests.jsonl]
prints its base URL (e.g. `http://127.0.0.1:41234/v1`) as the first stdout line and serves until
SIGTERM/SIGINT. replies.json is a JSON list of objects, one per reply:
    {"text": "..."} (optional "usage", "finish_reason", "chunk_delay", "drop_after", "stall_after",
    "stall_seconds", "prompt_tokens", "prompt_seconds")
    {"status": 429, "body": "...", "headers": {...}, "content_type": "text/html"}
    {"hang": 30}   {"hang": null}   {"drop": true}   {"garbage": "text sent as raw bytes"}
    {"delay": 1.5, "reply": {...}}
Each recorded request is appended to the --record file as one JSON line
{"method", "path", "headers", "body"} as soon as it arrives.

Only what the tests need is implemented; `n`, tools and logprobs are ignored.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

MODEL = "fake-coder"


@dataclass(frozen=True)
class Text:
    text: str
    usage: dict[str, int] | bool | None = True
    """True: computed (whitespace tokens); None/False: omitted; a dict: sent as given."""
    finish_reason: str = "stop"
    chunk_delay: float = 0.0
    """Seconds between streamed chunks."""
    drop_after: int | None = None
    """Streaming only: close the connection after this many content chunks."""
    stall_after: int | None = None
    """Streaming only: after this many content chunks, send nothing more (a hung endpoint mid-answer)."""
    stall_seconds: float | None = None
    """How long a stall lasts before the connection is cut (None: until the server stops)."""
    prompt_tokens: int | None = None
    """Streaming with `return_progress`: the prompt's size in llama.cpp's `prompt_progress` chunks."""
    prompt_seconds: float = 0.0
    """Seconds per 512-token batch of the prompt."""


@dataclass(frozen=True)
class Error:
    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    """Raw body; default is an OpenAI-style {"error": {"message": ...}} JSON."""
    content_type: str = "application/json"


@dataclass(frozen=True)
class Hang:
    seconds: float | None = None
    """None: until the server stops."""


@dataclass(frozen=True)
class Drop:
    pass


@dataclass(frozen=True)
class Garbage:
    data: bytes = b"\x00\xffthis is not HTTP\r\n\r\n"


@dataclass(frozen=True)
class Delay:
    seconds: float
    reply: Reply


Reply = Text | Error | Hang | Drop | Garbage | Delay


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: dict[str, Any] | None
    """The parsed JSON body (None for GET or unparsable bodies)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))

    @property
    def task_message(self) -> str:
        """The first user message: the task as the programmer states it."""
        return next(str(m.get("content", "")) for m in self.messages if m.get("role") == "user")

    @property
    def task_function(self) -> str:
        """The function the task asks for: the code block after "Complete this Python function" (the module
        context before or after it may show other functions whole)."""
        task = self.task_message
        start = task.find("```python\n", max(task.find("Complete this Python function"), 0))
        if start == -1:
            return task
        start += len("```python\n")
        end = task.find("```", start)
        return task[start:] if end == -1 else task[start:end]

    @property
    def prompt_text(self) -> str:
        """All message contents joined: for `in` assertions."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


def reply_from_json(spec: dict[str, Any]) -> Reply:
    """One reply from its JSON form (see the module docstring)."""
    if "text" in spec:
        return Text(
            spec["text"],
            usage=spec.get("usage", True),
            finish_reason=spec.get("finish_reason", "stop"),
            chunk_delay=float(spec.get("chunk_delay", 0.0)),
            drop_after=spec.get("drop_after"),
            stall_after=spec.get("stall_after"),
            stall_seconds=spec.get("stall_seconds"),
            prompt_tokens=spec.get("prompt_tokens"),
            prompt_seconds=float(spec.get("prompt_seconds", 0.0)),
        )
    if "status" in spec:
        return Error(int(spec["status"]), spec.get("message", "scripted error"),
                     dict(spec.get("headers", {})), spec.get("body"),
                     spec.get("content_type", "application/json"))
    if "hang" in spec:
        return Hang(spec["hang"])
    if spec.get("drop"):
        return Drop()
    if "garbage" in spec:
        return Garbage(str(spec["garbage"]).encode())
    if "delay" in spec:
        return Delay(float(spec["delay"]), reply_from_json(spec["reply"]))
    raise ValueError(f"unknown scripted reply: {spec!r}")


def _tokens(text: str) -> int:
    return len(text.split())


class ReplyQueue:
    """Scripted replies in order, taken by the endpoint's request threads (thread-safe)."""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque(replies or ())

    def add(self, *replies: Reply | str) -> None:
        """Append replies; a plain string is a `Text`."""
        with self._lock:
            self._replies.extend(Text(r) if isinstance(r, str) else r for r in replies)

    def take(self) -> Reply | None:
        """The next reply; None when the test queued too few."""
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._replies)


def chat_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if r.path.endswith("/chat/completions")]


class FakeOpenAI:
    """The server. Start/stop it as a context manager (or start()/stop())."""

    def __init__(
        self,
        replies: list[Reply] | None = None,
        *,
        responder: Callable[[RecordedRequest], Reply | str] | None = None,
        models: tuple[str, ...] = (MODEL,),
        port: int = 0,
        record_to: Path | None = None,
    ) -> None:
        self._script = ReplyQueue(replies)
        self.responder = responder
        self.models = models
        self.requests: list[RecordedRequest] = []
        self._record_to = record_to
        self._lock = threading.Lock()
        self._hanging = 0
        self._stopping = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What OPENAI_BASE_URL should be: `http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    url = base_url

    def queue(self, *replies: Reply | str) -> None:
        """Append replies; a plain string is a `Text`."""
        self._script.add(*replies)

    @property
    def pending(self) -> int:
        """Replies still queued (a test can assert it used them all)."""
        return len(self._script)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return chat_requests(self.requests)

    @property
    def hanging(self) -> int:
        """Requests held open by a `Hang` right now (also served as `GET /v1/_fake/hanging`, so a client
        under test can wait until its request is really at the model before it cancels)."""
        with self._lock:
            return self._hanging

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # called from handler threads
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            if self._record_to is not None:
                with self._record_to.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(request.__dict__) + "\n")

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if self.responder is not None:
            reply = self.responder(request)
            return Text(reply) if isinstance(reply, str) else reply
        reply = self._script.take()
        if reply is not None:
            return reply
        return Error(500, "fake OpenAI server: no scripted reply left for this request "
                          "(the test queued too few replies)")


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # clients that hang up (timeouts, cancellations) are part of the script, not errors
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
            pass

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            server._record(RecordedRequest("GET", self.path, self._headers(), None))
            if self.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]
                self._send_json(200, {"object": "list", "data": data})
            elif self.path.rstrip("/").endswith("/_fake/hanging"):
                self._send_json(200, {"hanging": server.hanging})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            request = RecordedRequest("POST", self.path, self._headers(), body)
            server._record(request)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            if not isinstance(body, dict):
                self._send_json(400, {"error": {"message": "body is not a JSON object"}})
                return
            self._play(server._next_reply(request), body)

        def _play(self, reply: Reply, body: dict[str, Any]) -> None:
            if isinstance(reply, Delay):
                if server._stopping.wait(reply.seconds):
                    return self._drop()
                return self._play(reply.reply, body)
            if isinstance(reply, Hang):
                with server._lock:
                    server._hanging += 1
                try:
                    server._stopping.wait(reply.seconds)
                finally:
                    with server._lock:
                        server._hanging -= 1
                return self._drop()
            if isinstance(reply, Drop):
                return self._drop()
            if isinstance(reply, Garbage):
                self.wfile.write(reply.data)
                self.wfile.flush()
                return self._drop()
            if isinstance(reply, Error):
                text = reply.body if reply.body is not None else json.dumps(
                    {"error": {"message": reply.message, "type": "scripted", "code": reply.status}})
                data = text.encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                return None
            usage = _usage(reply, body)
            if body.get("stream"):
                return self._stream(reply, body, usage)
            message = {"role": "assistant", "content": reply.text}
            payload: dict[str, Any] = {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model") or MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            }
            if usage is not None:
                payload["usage"] = usage
            self._send_json(200, payload)
            return None

        def _stream(self, reply: Text, body: dict[str, Any], usage: dict[str, int] | None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            model = body.get("model") or MODEL

            def chunk(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
                payload = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                           "created": int(time.time()), "model": model, "choices": choices}
                payload.update(extra or {})
                return payload

            if reply.prompt_tokens is not None and body.get("return_progress"):
                started, total = time.monotonic(), reply.prompt_tokens
                for processed in [*range(0, total, 512), total]:
                    if processed and server._stopping.wait(reply.prompt_seconds):
                        return self._drop()
                    ms = int((time.monotonic() - started) * 1000)
                    self._event(chunk([{"index": 0, "delta": {"role": "assistant", "content": None},
                                        "finish_reason": None}],
                                      {"prompt_progress": {"total": total, "cache": 0, "processed": processed,
                                                           "time_ms": ms}}))
            self._event(chunk([{"index": 0, "delta": {"role": "assistant", "content": ""},
                                "finish_reason": None}]))
            for n, piece in enumerate(_pieces(reply.text)):
                if reply.drop_after is not None and n >= reply.drop_after:
                    return self._drop()
                if reply.stall_after is not None and n >= reply.stall_after:
                    server._stopping.wait(reply.stall_seconds)
                    return self._drop()
                if reply.chunk_delay and server._stopping.wait(reply.chunk_delay):
                    return self._drop()
                self._event(chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
            self._event(chunk([{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]))
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if include_usage and usage is not None:
                self._event(chunk([], {"usage": usage}))
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")
            return None

        def _event(self, payload: dict[str, Any]) -> None:
            self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _drop(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


def _pieces(text: str) -> Iterator[str]:
    """Split an answer into stream chunks of a few characters, like a tokenizer would."""
    size = 8
    for start in range(0, len(text), size):
        yield text[start:start + size]


def _usage(reply: Text, body: dict[str, Any]) -> dict[str, int] | None:
    if reply.usage is None or reply.usage is False:
        return None
    if isinstance(reply.usage, dict):
        return dict(reply.usage)
    prompt = sum(_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
    completion = _tokens(reply.text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI for one test; import this fixture into a conftest.py to use it."""
    with FakeOpenAI() as server:
        yield server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.openai_server", description="A scripted OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON list of scripted replies")
    parser.add_argument("--record", type=Path, help="append every request as a JSON line to this file")
    args = parser.parse_args(argv)
    replies = [reply_from_json(s) for s in json.loads(args.script.read_text())] if args.script else []
    server = FakeOpenAI(replies, port=args.port, record_to=args.record)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with server:
        print(server.base_url, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
