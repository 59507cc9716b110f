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


class Report(Capture):
    def __init__(self, fd):
        super().__init__(fd, MAX_REPORT_BYTES)

    def messages(self):
        """(the runner's messages in order, the runner's internal error); None for unreadable lines."""
        messages, internal = [], None
        for line in b"".join(self.chunks).split(b"\n"):
            if not line:
                continue
            try:
                # as runner.send_report encodes it: a lone surrogate the job printed is its output too
                message = json.loads(line.decode("utf-8", "surrogatepass"))
            except ValueError:
                message = None
            if isinstance(message, dict) and set(message) == {"internal_error"}:
                internal = str(message["internal_error"])
            else:
                messages.append(message)
        return messages, internal


def wait_for_child(pid, captures, deadline):
    """Pump the job's pipes until it exits or the deadline passes. Returns (wait status | None)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return 0
            if done:
                return status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            watched = [c.fd for c in captures if c.open]
            if pidfd is not None:
                watched.append(pidfd)
            wait = remaining if pidfd is not None else min(remaining, 0.01)
            ready, _, _ = select.select(watched, [], [], wait)
            for capture in captures:
                if capture.open and capture.fd in ready:
                    capture.read()
    finally:
        if pidfd is not None:
            os.close(pidfd)


def drain(captures, seconds=0.05):
    """Read what is already buffered without waiting for EOF (strays may hold the pipes open)."""
    stop = time.monotonic() + seconds
    for capture in captures:
        os.set_blocking(capture.fd, False)
        while capture.open and time.monotonic() < stop and capture.read():
            pass
