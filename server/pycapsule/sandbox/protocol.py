"""Host side of the worker protocol: frames (4-byte length + JSON) over a byte transport.

Every backend supplies a `Transport` (pipes of a local process, or Docker's attach socket);
everything above it is shared, so there is one protocol for all backends.
"""

from __future__ import annotations

import functools
import json
import struct
import threading
import time
from abc import ABC, abstractmethod
from importlib import resources
from typing import Any

FRAME_HEADER = struct.Struct(">I")

# The worker is sent over stdin, so the sandbox needs no copy of pycapsule (Docker's root is read-only):
# bootstrap_payload(), the worker package's bootstrap module with the package's sources.
BOOTSTRAP = (
    "import sys;r=sys.stdin.buffer;n=int(r.readline());g={'__name__':'pycapsule_worker'};"
    "exec(compile(r.read(n),'pycapsule-worker','exec'),g);sys.exit(g['main']())"
)


class WorkerGone(Exception):
    """The worker closed its end or its process died."""


class WorkerTimeout(Exception):
    """The worker did not answer before the host-side deadline."""


class WorkerGarbage(Exception):
    """The worker answered something that is not a valid frame."""


class JobCancelled(Exception):
    """The caller cancelled while waiting for the worker's answer."""


CANCEL_POLL = 0.1
"""Seconds between looks at the cancel event while a job runs."""


def worker_sources() -> dict[str, str]:
    """The worker package's modules by name inside the package ("" for its __init__), read, not imported."""
    package = resources.files("pycapsule.sandbox").joinpath("worker")
    modules = (entry for entry in package.iterdir() if entry.name.endswith(".py"))
    return {("" if entry.name == "__init__.py" else entry.name.removesuffix(".py")): entry.read_text("utf-8")
            for entry in sorted(modules, key=lambda entry: entry.name)}


@functools.cache
def bootstrap_payload() -> bytes:
    """What BOOTSTRAP reads: the worker's bootstrap module, told the sources of the package it runs."""
    sources = worker_sources()
    source = f"{sources.pop('bootstrap')}\ninstall({sources!r})\n".encode()
    return f"{len(source)}\n".encode() + source


def encode_frame(message: dict[str, Any]) -> bytes:
    payload = json.dumps(message).encode()
    return FRAME_HEADER.pack(len(payload)) + payload


class Transport(ABC):
    """A duplex byte stream to one running worker."""

    @abstractmethod
    def send(self, data: bytes) -> None:
        """Write all of data; raises WorkerGone."""

    @abstractmethod
    def receive(self, deadline: float) -> bytes:
        """Some bytes (b'' at end of stream); raises WorkerTimeout after `deadline` (time.monotonic)."""

    @abstractmethod
    def kill(self) -> None:
        """Stop the worker and everything in its sandbox, now."""

    def diagnostics(self) -> str:
        """What the worker printed on its own stderr (for 'could not start' messages)."""
        return ""

    def oom_kills(self) -> int | None:
        """Processes the kernel killed in this sandbox for want of memory, when the backend can tell."""
        return None


class Channel:
    """Frames on top of a transport."""

    def __init__(self, transport: Transport):
        self.transport = transport
        self._buffer = bytearray()

    def send(self, message: dict[str, Any]) -> None:
        self.transport.send(encode_frame(message))

    def _fill(self, size: int, deadline: float, cancel: threading.Event | None) -> None:
        while len(self._buffer) < size:
            data = self._receive(deadline, cancel)
            if not data:
                raise WorkerGone("the worker closed its output")
            self._buffer += data

    def _receive(self, deadline: float, cancel: threading.Event | None) -> bytes:
        if cancel is None:
            return self.transport.receive(deadline)
        while True:  # a transport's timeout loses no data, so waiting in short steps is safe
            if cancel.is_set():
                raise JobCancelled()
            try:
                return self.transport.receive(min(deadline, time.monotonic() + CANCEL_POLL))
            except WorkerTimeout:
                if time.monotonic() >= deadline:
                    raise

    def receive(self, deadline: float, max_size: int,
                cancel: threading.Event | None = None) -> dict[str, Any]:
        """The next frame; raises JobCancelled as soon as `cancel` is set (the frame is then lost: kill the
        worker)."""
        self._fill(FRAME_HEADER.size, deadline, cancel)
        (size,) = FRAME_HEADER.unpack_from(self._buffer)
        if size > max_size:
            raise WorkerGarbage(f"the worker sent a {size}-byte reply (limit {max_size})")
        self._fill(FRAME_HEADER.size + size, deadline, cancel)
        payload = bytes(self._buffer[FRAME_HEADER.size : FRAME_HEADER.size + size])
        del self._buffer[: FRAME_HEADER.size + size]
        try:
            message = json.loads(payload)
        except ValueError as error:
            raise WorkerGarbage("the worker sent a reply that is not JSON") from error
        if not isinstance(message, dict):
            raise WorkerGarbage("the worker sent a reply that is not an object")
        return message
