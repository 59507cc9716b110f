"""The words for the self-debugging loop's events (`pycapsule.loop`), for every surface that shows them:
`generate`'s progress on a terminal or in a log (commands/progress.py) and the language server's
progress, `pycapsule/status` messages and run-end messages (lsp/runs.py).

The surfaces differ in layout only (a live line, plain lines, a progress report with a percentage);
what an event says is written here once:

    attempt 2/5: fixing                        an attempt starts (generating | fixing | starting over)
    checking the current body                  fix mode runs the current body first (attempt 0)
    attempt 2/5: doctests passed               an attempt passed
    attempt 1/5: doctest failed: expected ...  an attempt failed: the loop's one-line headline
    attempt 3/5: repeated attempt 1 (not run again): doctest failed: expected ...
                                               an answer was code already tried: that attempt's result
    model call failed (HTTP 503); retrying in 2.0 s
"""

from __future__ import annotations

from typing import Any

from pycapsule.events import AttemptFinished, AttemptStarted, ModelRetrying, Notice, Outcome

_DOING = {
    "generate": "generating",
    "fix": "fixing",
    "restart": "starting over",
    "check": "checking the current body",
}


def doing(event: AttemptStarted) -> str:
    return _DOING.get(event.mode, event.mode)


def result(event: AttemptFinished) -> str:
    if event.passed:
        return "doctests passed"
    failure = event.headline or event.verdict or "failed"
    return failure if event.repeated is None else f"{repeated(event.repeated)}: {failure}"


def repeated(attempt: int) -> str:
    """An answer whose code attempt `attempt` already tried (0: the current body, in fix mode; below 0: an
    earlier run of the same function)."""
    earlier = ("the current body" if attempt == 0 else "a body an earlier run tried" if attempt < 0
               else f"attempt {attempt}")
    return f"repeated {earlier} (not run again)"


def retrying(event: ModelRetrying) -> str:
    return f"model call failed ({event.reason}); retrying in {event.delay:.1f} s"


def describe(event: Any) -> tuple[int, str] | None:
    """(attempt, what happened) for the events worth a line: attempts starting and ending, model retries,
    notices (attempt 0); None for the others (streamed text, the end)."""
    if isinstance(event, AttemptStarted):
        return event.attempt, doing(event)
    if isinstance(event, AttemptFinished):
        return event.attempt, result(event)
    if isinstance(event, ModelRetrying):
        return event.attempt, retrying(event)
    if isinstance(event, Notice):
        return 0, event.message
    return None


def attempt_label(attempt: int, max_attempts: int) -> str:
    """"attempt 2/5"; "" for attempt 0 (checking the current body, a notice): not a model attempt."""
    return f"attempt {attempt}/{max(max_attempts, attempt)}" if attempt > 0 else ""


def at_attempt(attempt: int, max_attempts: int, text: str) -> str:
    """`text` placed in its attempt: "attempt 2/5: fixing"; attempt 0: the text alone."""
    label = attempt_label(attempt, max_attempts)
    return f"{label}: {text}" if label else text


def streamed(line: str, characters: int) -> str:
    """While the model writes: "attempt 1/5: generating: 412 characters"."""
    return f"{line}: {characters} characters"


def outcome_line(outcome: Outcome) -> str:
    """The end of one function on a terminal: status, the loop's message, time and tokens."""
    tokens = outcome.usage.total_tokens
    return f"{outcome.status}: {outcome.message} ({outcome.seconds:.1f} s, {tokens} tokens)"


def run_summary(name: str, outcome: Outcome) -> str:
    """The end of one function in an editor, once its edit (if any) is applied."""
    if outcome.status == "passed":
        what = outcome.verified_by or "its doctests"
        if not outcome.edits:
            return f"`{name}` already passes {what}"
        return f"`{name}` passes {what} (attempt {outcome.attempts})"
    if outcome.status == "not_verified":
        return f"`{name}` filled but not verified: {outcome.message}"
    if outcome.status == "gave_up":
        return f"gave up on `{name}` after {outcome.attempts} attempts: {outcome.message}"
    if outcome.status == "cancelled":
        return cancelled(name)
    return f"`{name}`: {outcome.message}"


def cancelled(name: str) -> str:
    return f"`{name}`: cancelled"
