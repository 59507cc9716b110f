"""The job's output pipes pumped while it runs, each kept up to its limit."""

import json
import os
import select
import time

MAX_REPORT_BYTES = 16 * 1024 * 1024


class Capture:
    """One of the job's output pipes, keeping at most `limit` bytes."""

    def __init__(self, fd, limit):
        self.fd = fd
        self.limit = limit
        self.chunks = []
        self.kept = 0
        self.dropped = 0
        self.open = True

    def read(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.open = False
            return False
        room = self.limit - self.kept
        if room > 0:
            self.chunks.append(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))
        return True

    def text(self):
        return b"".join(self.chunks).decode("utf-8", "replace")


class ExampleOutput(Capture):
    """The pipe an example's stdout goes to: what each example printed, taken when it answers."""

    def take(self):
        """What arrived since the last take, as doctest's output checker sees it (a trailing newline
        added to output that lacks one)."""
        while self.open and self.read():  # the job wrote all of it before it answered
            pass
        data, dropped = b"".join(self.chunks), self.dropped
        self.chunks, self.kept, self.dropped = [], 0, 0
        try:
            text = data.decode("utf-8", "surrogatepass")  # the job encodes lone surrogates so
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
        if dropped:
            text += f"\n... ({dropped} more bytes)"
        return text + "\n" if text and not text.endswith("\n") else text


class Report(Capture):
    """The job's answers, one JSON line each, handed on as they complete."""

    def __init__(self, fd):
        super().__init__(fd, MAX_REPORT_BYTES)
        self.pending = b""
        self.internal = None

    def messages(self):
        """The complete lines read so far and not yet handed on, parsed (None for an unreadable one); the
        runner's internal error is kept aside."""
        data = self.pending + b"".join(self.chunks)
        self.chunks = []
        *lines, self.pending = data.split(b"\n")
        messages = []
        for line in lines:
            if not line:
                continue
            try:
                message = json.loads(line.decode("utf-8", "surrogatepass"))
            except ValueError:
                message = None
            if isinstance(message, dict) and set(message) == {"internal_error"}:
                self.internal = str(message["internal_error"])
            else:
                messages.append(message)
        return messages


def wait_for_child(pid, zygote, captures, deadline, after_read=lambda: None):
    """Pump the job's pipes until it exits or the deadline passes, calling `after_read` after each round of
    reads. Returns (wait status | None)."""
    while True:
        status = zygote.poll(pid)
        if status is not None:
            return status
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        watched = [c.fd for c in captures if c.open] + [zygote.fd]
        ready, _, _ = select.select(watched, [], [], remaining)
        for capture in captures:
            if capture.open and capture.fd in ready:
                capture.read()
        after_read()


def drain(captures, seconds=0.05):
    """Read what is already buffered without waiting for EOF (strays may hold the pipes open)."""
    stop = time.monotonic() + seconds
    for capture in captures:
        os.set_blocking(capture.fd, False)
        while capture.open and time.monotonic() < stop and capture.read():
            pass
