"""The shared model server's front door: 127.0.0.1, for this user's processes only.

llama.cpp listens on a unix socket inside the user's 0700 runtime folder, where no other user can
connect. Clients (the `openai` client, any HTTP client) need a TCP address, so the gate listens on a
free 127.0.0.1 port and relays each connection, byte for byte, to that socket, after checking who
opened it: the connecting socket's owner, read from the kernel's table of TCP sockets
(/proc/net/tcp, tcp6), must be this user. Anyone else gets `403` and the connection is closed. No
secret is involved, so none can leak into a URL, a log, the history or the sandbox (which has no
network and cannot connect at all).

A client that disconnects closes its relayed connection too: llama.cpp then cancels the request (it
checks its connection while it generates). The gate also tells the server how long it has been idle:
no connection open, counted from the last one's end, and keeps the `timings` llama.cpp sends at the end
of each answer (tokens read and written, and the milliseconds each took) of the last `KEPT` requests,
for `pycapsule model status`'s speed.
"""

from __future__ import annotations

import collections
import contextlib
import ipaddress
import json
import os
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

HOST = "127.0.0.1"
_CHUNK = 65536
_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
KEPT = 12
"""Requests whose timings the gate keeps."""
TIMED = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")
_KEY = b'"timings":'
_LONGEST = 4096
"""A `timings` object longer than this is not llama.cpp's (it is ~250 bytes): the scanner drops it."""


class TimingsScanner:
    """Finds the `"timings": {...}` objects in one connection's answers (a JSON body, or the last event of an
    SSE stream), whichever way the bytes are split between reads. A model's text cannot hold the key
    unescaped: inside a JSON string its quotes are `\\"`."""

    def __init__(self) -> None:
        self._carry = b""
        self._decoder = json.JSONDecoder()

    def feed(self, data: bytes) -> list[dict[str, float]]:
        text, found = self._carry + data, []
        while True:
            start = text.find(_KEY)
            if start < 0:
                self._carry = text[-(len(_KEY) - 1):]  # the key's start, cut by this read
                return found
            rest = text[start + len(_KEY):].lstrip()
            try:  # ascii with "replace": one character per byte, so `end` counts bytes too
                value, end = self._decoder.raw_decode(rest.decode("ascii", "replace"))
            except ValueError:  # not all there yet
                self._carry = text[start:] if len(text) - start < _LONGEST else b""
                return found
            text = rest[end:]
            if isinstance(value, dict) and all(isinstance(value.get(name), (int, float)) for name in TIMED):
                found.append({name: float(value[name]) for name in TIMED})


def _address(field: str) -> tuple[str, int]:
    """'0100007F:C350' (or its 32-hex-digit IPv6 form) as ('127.0.0.1', 50000); IPv4-mapped as IPv4."""
    host, port = field.split(":")
    raw = bytes.fromhex(host)
    # the kernel prints each 32-bit word in host byte order
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)) if sys.byteorder == "little" else raw
    address = ipaddress.ip_address(words)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port, 16)


def peer_uid(peer: tuple[str, int], ours: tuple[str, int]) -> int | None:
    """The uid owning the socket that connected from `peer` to `ours`; None if it cannot be found."""
    for table in _TABLES:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8:
                continue
            try:
                if _address(fields[1]) == peer and _address(fields[2]) == ours:
                    return int(fields[7])
            except ValueError:
                continue
    return None


def can_check_peers() -> bool:
    return os.access(_TABLES[0], os.R_OK)


def _refusal(message: str) -> bytes:
    body = json.dumps({"error": {"message": message, "type": "authentication_error", "code": 403}}).encode()
    head = (f"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()
    return head + body


def _refuse(client: socket.socket, message: str) -> None:
    """Answer 403 after reading what the client sent (closing on unread data would reset the connection
    before the client reads the answer)."""
    with contextlib.suppress(OSError):
        client.settimeout(2.0)
        client.recv(_CHUNK)
        client.sendall(_refusal(message))
        client.shutdown(socket.SHUT_WR)
        while client.recv(_CHUNK):
            pass


class Gate:
    """Listens on 127.0.0.1 (a free port), relays this user's connections to `upstream` (a unix socket)."""

    def __init__(self, upstream: Path, uid: int | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.upstream = upstream
        self.uid = os.getuid() if uid is None else uid
        self._log = log or (lambda line: print(f"pycapsule gate: {line}", file=sys.stderr, flush=True))
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind((HOST, 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open = 0
        self._last = time.monotonic()
        self._total = 0
        self._closed = False
        self.refused = 0
        self._timings: collections.deque[dict[str, float]] = collections.deque(maxlen=KEPT)
        self._timed = 0

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> Gate:
        threading.Thread(target=self._accept, name="gate-accept", daemon=True).start()
        return self

    def activity(self) -> tuple[int, float, int]:
        """(connections open now, seconds since the last one ended (0 while one is open), connections
        accepted so far)."""
        with self._lock:
            return self._open, (0.0 if self._open else time.monotonic() - self._last), self._total

    def timings(self) -> tuple[int, list[dict[str, float]]]:
        """(requests timed so far, the timings of the last `KEPT` of them, oldest first: `TIMED` and "at")."""
        with self._lock:
            return self._timed, list(self._timings)

    def _timed_answer(self, timings: list[dict[str, float]]) -> None:
        with self._lock:
            for entry in timings:
                self._timings.append({**entry, "at": time.time()})
                self._timed += 1

    def close(self) -> None:
        """Stop accepting: a client connecting from now on is refused by the kernel at once."""
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()

    def _touch(self, change: int = 0) -> None:
        with self._lock:
            self._open += change
            self._total += max(0, change)
            self._last = time.monotonic()

    def _accept(self) -> None:
        while True:
            try:
                client, peer = self._listener.accept()
            except OSError:
                with self._lock:
                    if self._closed:
                        return
                time.sleep(0.05)
                continue
            self._touch(+1)
            threading.Thread(target=self._serve, args=(client, peer), name="gate-relay", daemon=True).start()

    def _serve(self, client: socket.socket, peer: tuple[str, int]) -> None:
        try:
            with client:
                owner = peer_uid(peer[:2], (HOST, self.port))
                if owner != self.uid:
                    self.refused += 1
                    self._log(f"refused a connection from {peer[0]}:{peer[1]} "
                              f"({'uid ' + str(owner) if owner is not None else 'owner unknown'})")
                    _refuse(client, "this model server belongs to another user")
                    return
                self._relay(client)
        finally:
            self._touch(-1)

    def _relay(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        answers = TimingsScanner()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(client, selectors.EVENT_READ)
                while True:
                    for key, _events in selector.select():
                        source = key.fileobj
                        assert isinstance(source, socket.socket)
                        data = source.recv(_CHUNK)
                        if not data:  # either side closed: so does the other (a client gone cancels)
                            return
                        if source is client:
                            if upstream is None:  # connected only once a request comes
                                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                                upstream.connect(str(self.upstream))
                                selector.register(upstream, selectors.EVENT_READ)
                            upstream.sendall(data)
                        else:
                            client.sendall(data)
                            if timings := answers.feed(data):
                                self._timed_answer(timings)
                    self._touch()
        except OSError:
            return
        finally:
            if upstream is not None:
                with contextlib.suppress(OSError):
                    upstream.close()
