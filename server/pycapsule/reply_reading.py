"""A model's reply read for a self-debugging run (`pycapsule.loop`): its function spliced into the module,
or the failed attempt an answer with no usable code is; and why an answer ended before it was done (the
token limit, the time limit, a loop, a copy of the prompt), added to its failure."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pycapsule.capsule import Capsule
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import NoCodeError, extract_code
from pycapsule.debugging.signature import SignatureMismatch, Splice, splice
from pycapsule.judge import AttemptResult
from pycapsule.model_client import Reply
from pycapsule.prompts import keep_signature


@dataclass(frozen=True)
class _EndedEarly:
    """Why an answer ended before it was done, as each reader needs it."""

    headline: str
    """Added to the failure's headline (restart prompts name earlier failures by it)."""
    to_model: str
    """Added to the fix prompt: what to do instead."""
    to_user: str
    """Shown to the user under the headline."""


_TRUNCATED = _EndedEarly(" (cut off at the token limit)",
                       " It was cut off at the token limit: write less, no explanations.",
                       "The answer was cut off at the token limit.")
_LOOPED = _EndedEarly(" (stopped: it kept repeating the same lines)",
                    " It was stopped because it kept repeating the same lines: write each line once.",
                    "The answer was stopped because it kept repeating the same lines.")
_COPIED = _EndedEarly(" (stopped: it copied the module's code from the prompt)",
                    " It was stopped because it copied the module's code the prompt shows: write only the "
                    "function.",
                    "The answer was stopped because it copied the module's code from the prompt.")
_TIMED_OUT = _EndedEarly(" (cut off by the time limit)",
                       " It was cut off by the time limit as it was written: write less, no explanations.",
                       "The answer was cut off by the time limit (request_timeout).")
_DONE = _EndedEarly("", "", "")


def _ended_early(reply: Reply) -> _EndedEarly:
    if reply.truncated:
        return _TRUNCATED
    if reply.looped:
        return _LOOPED
    if reply.copied:
        return _COPIED
    if reply.timed_out:
        return _TIMED_OUT
    return _DONE


def read_reply(reply: Reply, capsule: Capsule) -> tuple[str, Splice] | AttemptResult:
    """The function `reply` wrote and the module with it spliced in; else the failed attempt it is (no
    code, or code that does not fit the function's signature)."""
    name, reply_text = capsule.name, reply.text
    ended = _ended_early(reply)
    try:
        code = strip_example_calls(extract_code(reply_text, name), name)
    except NoCodeError as error:
        error = str(error).rstrip(".")
        headline = f"no usable code in the answer{ended.headline}: {error}"
        return AttemptResult(reply_text.strip()[:2000], "no_code", headline,
                             f"Your answer had no usable Python code ({error}).{ended.to_model} Reply with "
                             f"the whole function `{name}` in one ```python code block.",
                             shown=ended.to_user)
    try:
        return code, splice(capsule, code)
    except SignatureMismatch as error:
        error = str(error).rstrip(".")
        return AttemptResult(code, "signature", f"the code does not fit `{name}`: {error}",
                             f"The code does not fit the function: {error}.{ended.to_model} "
                             f"{keep_signature(capsule)}",
                             shown=ended.to_user)


def as_far_as_it_went(result: AttemptResult, reply: Reply) -> AttemptResult:
    """`result` of the code in `reply`; when it failed and the answer ended early, that failure and why the
    answer stopped there."""
    ended = _ended_early(reply)
    if ended is _DONE or result.verdict == "passed":
        return result
    return replace(result, headline=result.headline + ended.headline,
                   condensed=result.condensed + "\n" + ended.to_model.strip(),
                   shown=f"{ended.to_user}\n{result.condensed if result.shown is None else result.shown}")
