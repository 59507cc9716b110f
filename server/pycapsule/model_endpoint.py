"""`Endpoint`: what a request needs of the server it goes to beyond the OpenAI API, as `Programmer` asks it.

The base class is a generic OpenAI-compatible endpoint's: no options of its own, nothing read ahead, no
slot to check. The embedded model's llama.cpp server extends it (embedded_model/llama_endpoint.py).

Two things are every endpoint's: the server's process when it runs on this machine (`server`: its pid
for what a stall says, and how it stopped), and llama.cpp's figures in a streamed chunk (the prompt's
counts and rate), read from any endpoint since a user's own llama.cpp server may be one (other servers
send none).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading

    from pycapsule.model_progress import ServerProbe
    from pycapsule.model_reply import Message

Reuse = tuple[int, int]
"""(the prompt's tokens, how many of them the server holds read ahead) for one request."""
NO_REUSE: Reuse = (0, 0)
"""The request reads its whole prompt."""

PromptCounts = tuple[int, int, int, float]
"""llama.cpp's `prompt_progress`: (total, cached, processed, ms)."""

SlotCheck = Callable[[Any, PromptCounts | None], None]
"""Called with each streamed chunk of a request and its prompt counts; raises `AskAgain`."""


class AskAgain(Exception):
    """The request's assumption about the server was found false before a token was read (the embedded
    model's slot held another prompt than the one read ahead): it is sent again, reusing nothing."""


def _no_check(chunk: Any, counted: PromptCounts | None) -> None:
    return None


class Endpoint:
    """A generic OpenAI-compatible endpoint. Thread-safe."""

    def __init__(self, server: ServerProbe | None = None) -> None:
        """`server`: the embedded model's server (its pid, how it stopped), for what a stall says."""
        self.server = server

    @property
    def server_pid(self) -> int | None:
        return self.server.pid if self.server is not None else None

    def server_error(self) -> str | None:
        """How the server stopped, when it has: a request to it would only wait out its timeout."""
        return self.server.error() if self.server is not None else None

    def read_ahead(self, messages: Sequence[Message], stop: Callable[[], bool],
                   turn: threading.Semaphore | None) -> int:
        """Reads the prompt into the server's cache ahead of its request (`Programmer.read_ahead`);
        the prompt tokens now held. Raises `ModelError`."""
        return 0

    def reuse(self, messages: Sequence[Message], temperature: float) -> Reuse:
        """What a request for `messages` takes of what was read ahead."""
        return NO_REUSE

    def forget(self) -> None:
        """Nothing read ahead is known to be held any more."""

    def options(self, temperature: float, reuse: Reuse, continued: bool = False) -> dict[str, Any]:
        """The server's own options of a request (its `extra_body`); `continued`: it goes on from the answer
        the request before it streamed."""
        return {}

    def slot_check(self, reuse: Reuse) -> SlotCheck:
        """The check of one try's chunks that the server holds what the try takes from it."""
        return _no_check

    @staticmethod
    def prompt_counts(chunk: Any) -> PromptCounts | None:
        """llama.cpp's `prompt_progress` in a streamed chunk: (total, cached, processed, ms), else None."""
        counts = getattr(chunk, "prompt_progress", None)
        if not isinstance(counts, dict):
            return None
        try:
            return (int(counts["total"]), int(counts.get("cache", 0)), int(counts["processed"]),
                    float(counts.get("time_ms", 0)))
        except (KeyError, TypeError, ValueError):
            return None

    @staticmethod
    def prompt_rate(chunk: Any) -> float | None:
        """The prompt rate llama.cpp measured (its last chunk's `timings`), when it read enough to tell."""
        timings = getattr(chunk, "timings", None)
        if not isinstance(timings, dict):
            return None
        rate, read = timings.get("prompt_per_second"), timings.get("prompt_n")
        if not isinstance(rate, int | float) or not isinstance(read, int) or read < 32:
            return None
        return float(rate) if math.isfinite(rate) and rate > 0 else None
