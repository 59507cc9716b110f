"""What a model call is sent, yields and returns: `Message`, `Retrying`, `Reply` with its `Usage`."""

from __future__ import annotations

from dataclasses import dataclass

from pycapsule.debugging.answer_watch import COMPLETE, COPIED, ECHOED, LOOPED

Message = dict[str, str]
"""One chat message as the endpoint takes it: {"role": ..., "content": ...}."""

# `Reply.finish_reason`s of an answer ended here (debugging/answer_watch.py): it kept repeating itself
# (LOOPED), its function was complete (COMPLETE), it copied the prompt's context (COPIED), it repeated the
# function's head, whose rest the next request gives it (ECHOED; `Programmer.stream` goes on from there).
TIMED_OUT = "timed_out"
"""`Reply.finish_reason` of an answer cut off here by `request_timeout` while it streamed: what came
is kept."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    """True when the endpoint sent no `usage` and the numbers were counted here."""
    cached_tokens: int = 0
    """Of `prompt_tokens`, those the endpoint did not read again: reused from its prompt cache."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.estimated or other.estimated,
                     self.cached_tokens + other.cached_tokens)


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    finish_reason: str | None
    model: str
    seconds: float
    """Wall-clock time of the successful request (retries and waits excluded)."""
    echo_rest: str = ""
    """(`echoed`) The rest of the function's head the answer was repeating."""
    copied_from: int = -1
    """(`copied`) Where in `text` the code the answer copied the context into begins (-1: before it)."""

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    @property
    def looped(self) -> bool:
        """The answer fell into repeating itself and was ended early (`debugging.repetition`)."""
        return self.finish_reason == LOOPED

    @property
    def copied(self) -> bool:
        """The answer started copying the prompt's context and was ended early (`debugging.answer_watch`)."""
        return self.finish_reason == COPIED

    @property
    def ended_at_code_end(self) -> bool:
        """The answer's function was complete and the rest was not read (`debugging.answer_watch`)."""
        return self.finish_reason == COMPLETE

    @property
    def echoed(self) -> bool:
        """The answer was repeating the function's head and was ended to be given the rest of it."""
        return self.finish_reason == ECHOED

    @property
    def timed_out(self) -> bool:
        """The answer was still streaming when `request_timeout` ran out."""
        return self.finish_reason == TIMED_OUT


@dataclass(frozen=True)
class Retrying:
    """Yielded by `Programmer.stream` before a retry: what went wrong and how long it waits."""

    reason: str
    delay: float
    try_number: int
