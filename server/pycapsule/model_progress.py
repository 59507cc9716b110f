"""Where one model request is, second by second: its phases and their figures, and why it is stuck.

`Programmer.stream(progress=True)` yields a `Progress` when a phase starts, when the server's counts move
and at least once a second while nothing else comes (so every surface can show the seconds go by; while
the model writes, every half second):

    starting   the embedded model is installed or its server started (`note`: the install's lines)
    connecting an endpoint's client is made (the first request of a process only)
    waiting    the request waits its turn (this process's other request, or the shared model's queue)
    reading    the model reads the prompt: with the embedded model, tokens read of the prompt's total
               from llama.cpp's own counters (`prompt_progress`, one count per 512-token batch) and the
               time left at the rate measured so far (this request's, else the one before); another
               endpoint has no such counters, so the phase is shown without figures
    writing    tokens written (one streamed piece is one token) and their rate

When nothing has moved for `stall_notice` seconds, `stalled` says why in one sentence (`why_stalled`): the
machine is busy (the load, and how little CPU the model got), the shared model is answering another
request, the model server is alive but not working, or an endpoint that sends nothing. The request then
goes on to its normal end (the answer, or `inactivity_timeout` / `request_timeout`); a model server found
dead ends it at once (`model_stream`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol

Phase = Literal["starting", "connecting", "waiting", "reading", "writing"]

HEARTBEAT = 1.0
"""A phase's figures are sent again at least this often while it lasts (the seconds go on)."""
WRITING_EVERY = 0.5
"""While the model writes, its token count and rate are sent this often."""


@dataclass(frozen=True)
class Progress:
    phase: Phase
    seconds: float = 0.0
    """Since the phase began."""
    done: int | None = None
    """reading: prompt tokens the server has read (those from its cache included); writing: tokens written."""
    total: int | None = None
    """reading: the prompt's tokens, as the server counts them."""
    cached: int = 0
    """reading: of `done`, taken from the server's prompt cache."""
    rate: float | None = None
    """Tokens/s: reading, the server's own measure (this request's, else the request before's); writing,
    counted here."""
    left: float | None = None
    """Estimated seconds left in this phase (reading only: the tokens left at `rate`)."""
    note: str = ""
    """starting: one line of the install or start, to show once."""
    stalled: str = ""
    """Set while nothing has moved for `stall_notice` seconds: why, in one sentence."""


class ServerProbe(Protocol):
    """The embedded model's server as a request sees it (`embedded_model.endpoint.LocalEndpoint`)."""

    @property
    def pid(self) -> int: ...

    def error(self, grace: float = 0.0) -> str | None: ...


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, all threads) process `pid` has used; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def machine_load() -> tuple[float, int]:
    """(the 1-minute load average, the cores this process may use)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return load, cores


def why_stalled(phase: Phase, seconds: float, *, who: str, local: bool, model_cores: float | None,
                limit: str) -> str:
    """One sentence: why a request in `phase` has moved for `seconds`. `model_cores`: the cores the local
    model server used meanwhile (None: not known); `limit`: what ends the wait ('request_timeout, 300 s')."""
    waited = f"nothing has moved for {seconds:.0f} s"
    load, cores = machine_load()
    machine = f"load {load:.1f} on {cores} core{'s' if cores != 1 else ''}"
    if not local:
        what = "has sent nothing" if phase != "writing" else "has stopped sending"
        return (f"{waited}: {who} {what}; it is busy or queueing the request (nothing here can tell which); "
                f"still waiting, up to {limit}")
    if model_cores is not None and model_cores >= 0.5:
        if phase == "waiting":
            why = (f"the shared model is answering another request first (it used {model_cores:.1f} "
                   "cores meanwhile); this one waits its turn")
        else:
            why = (f"the model is working but slowly (it used {model_cores:.1f} cores; {machine}): one batch "
                   "of the prompt takes it longer than that here")
    elif load >= 0.9 * cores:
        got = f", and the model got {model_cores:.1f} of a core" if model_cores is not None else ""
        why = f"the machine is busy ({machine}{got}): other processes are using the cores"
    elif model_cores is not None:
        why = (f"the model server is running but not working on it (it used {model_cores:.1f} of a core, "
               f"{machine}): it may be stuck")
    else:
        why = f"the model server does not say why ({machine})"
    return f"{waited}: {why}; still waiting, up to {limit}"


class RequestWatch:
    """The phases of one request as its stream arrives: what `Progress` to yield, and when."""

    def __init__(self, *, local: bool, stall_notice: float, prompt_rate: float | None,
                 stalled: Callable[[Phase, float, float | None], str],
                 server_pid: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """`stalled(phase, seconds, model_cores)`: the sentence for a stall (`why_stalled`, bound)."""
        self._clock, self._stall_notice, self._why = clock, stall_notice, stalled
        self._pid = server_pid
        now = clock()
        self.current = Progress("waiting" if local else "reading")
        self._began = self._shown = now
        self._moved = now
        self._cpu_at_move = cpu_seconds(server_pid) if server_pid else None
        self._prompt_rate = prompt_rate
        self._count_at: float | None = None
        self._first_token: float | None = None
        self._tokens = 0

    def start(self) -> Progress:
        return self._show(self._clock())

    def prompt(self, total: int, cached: int, processed: int, time_ms: float) -> Progress | None:
        """The server's prompt counts (llama.cpp's `prompt_progress`): shown when they move."""
        now = self._clock()
        read = max(processed - cached, 0)
        if read > 0 and time_ms > 0:
            self._prompt_rate = read / (time_ms / 1000)
        if self.current.phase != "reading":
            self._phase("reading", now)
        elif (processed, total) == (self.current.done, self.current.total):
            return None
        self._move(now)
        self._count_at = now
        self.current = replace(self.current, done=processed, total=total, cached=cached,
                               rate=self._prompt_rate)
        return self._show(now)

    def token(self) -> Progress | None:
        """One streamed piece of the answer: shown at once when it begins the writing, else at most every
        `WRITING_EVERY` seconds."""
        now = self._clock()
        self._tokens += 1
        self._move(now)
        if self.current.phase != "writing":
            self._first_token = now
            self._phase("writing", now)
        began = self._first_token if self._first_token is not None else now
        rate = (self._tokens - 1) / (now - began) if self._tokens > 1 and now > began else None
        self.current = replace(self.current, done=self._tokens, rate=rate)
        if self._tokens == 1 or now - self._shown >= WRITING_EVERY:
            return self._show(now)
        return None

    def tick(self) -> Progress | None:
        """Called while waiting for the stream: a heartbeat once a second, and the stall sentence once
        nothing has moved for `stall_notice` seconds."""
        now = self._clock()
        idle = now - self._moved
        if idle >= self._stall_notice and not self.current.stalled:
            cpu = cpu_seconds(self._pid) if self._pid else None
            cores = (cpu - self._cpu_at_move) / idle if cpu is not None and self._cpu_at_move is not None \
                else None
            self.current = replace(self.current, stalled=self._why(self.current.phase, idle, cores))
            return self._show(now)
        if now - self._shown >= HEARTBEAT:
            return self._show(now)
        return None

    @property
    def prompt_rate(self) -> float | None:
        """The prompt rate last measured (for the next request's first estimate)."""
        return self._prompt_rate

    def _phase(self, phase: Phase, now: float) -> None:
        self.current, self._began = Progress(phase), now

    def _move(self, now: float) -> None:
        self._moved = now
        if self.current.stalled:
            self.current = replace(self.current, stalled="")
        if self._pid:
            self._cpu_at_move = cpu_seconds(self._pid)

    def _show(self, now: float) -> Progress:
        self._shown = now
        shown = replace(self.current, seconds=now - self._began)
        if shown.phase == "reading" and shown.total is not None and shown.rate:
            done = shown.done or 0
            since = now - self._count_at if self._count_at is not None else 0.0
            shown = replace(shown, left=max((shown.total - done) / shown.rate - since, 0.0))
        return shown
