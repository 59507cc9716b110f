"""The words for the self-debugging loop's events (`pycapsule.loop`), the shared core's, for every surface
that shows them: `generate`'s progress on a terminal or in a log (commands/progress.py) and the language
server's progress, `pycapsule/status` messages and run-end messages (lsp/runs.py). Each front end's own
sentences around them (a function's end line on a terminal; a run's end with its strength and closest try,
refusals, the edit's fate in an editor) are its wording module's: commands/wording.py, lsp/wording.py.

The surfaces differ in layout only (a live line, plain lines, a progress report with a percentage);
what an event says is written here once:

    attempt 2/5: fixing                        an attempt starts (generating | fixing | starting over)
    checking the current body                  fix mode runs the current body first (attempt 0)
    attempt 2/5: doctests passed               an attempt passed
    attempt 1/5: doctest failed: expected ...  an attempt failed: the loop's one-line headline
    attempt 3/5: repeated attempt 1 (not run again): doctest failed: expected ...
                                               an answer was code already tried: that attempt's result
    model call failed (HTTP 503); retrying in 2.0 s

and, while an attempt goes on, its phases (`events.ModelProgress`, `events.Checking`), each with its figures:

    starting the model: 3 s                    the embedded model's server starting (or installing: its lines)
    connecting to the model: 0 s               an endpoint's client being made (a process's first request)
    waiting for the model: 4 s                 the request waits its turn
    reading the prompt: 512 of 1,380 tokens, ~14 s left    the embedded model's own counts; the time
                                               left at the rate it measured (an estimate, hence ~)
    reading the prompt: 6 s                    an endpoint that gives no counts
    writing: 120 tokens, 14 tokens/s
    running 3 examples, then 12 tests          the sandbox checks the answer
    trying small changes of the body           a body passed: do its examples and tests catch its mutants?
    ...; nothing has moved for 30 s: the machine is busy (load 7.9 on 2 cores, ...); still waiting, up to ...
"""

from __future__ import annotations

from typing import Any

from pycapsule.events import (
    AttemptFinished,
    AttemptStarted,
    Checking,
    ModelProgress,
    ModelRetrying,
    Notice,
    Outcome,
    Pinning,
)
from pycapsule.model_progress import Progress

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


def phase(progress: Progress) -> str:
    """One phase of a model request with its figures: "reading the prompt: 512 of 1,380 tokens, ~14 s left"
    (a line of the model's install or start: that line); a stalled one says why after it."""
    if progress.note:
        return progress.note
    if progress.phase == "writing":
        rate = f", {progress.rate:.0f} tokens/s" if progress.rate else ""
        done = progress.done or 0
        text = f"writing: {done:,} token{'s' if done != 1 else ''}{rate}"
    elif progress.phase == "reading" and progress.total is not None:
        cached = f" ({progress.cached:,} from the cache)" if progress.cached else ""
        left = f", ~{progress.left:.0f} s left" if progress.left is not None else ""
        text = f"reading the prompt: {progress.done or 0:,} of {progress.total:,} tokens{cached}{left}"
    else:
        doing = {"starting": "starting the model", "connecting": "connecting to the model",
                 "waiting": "waiting for the model", "reading": "reading the prompt"}[progress.phase]
        text = f"{doing}: {progress.seconds:.0f} s"
    return f"{text}; {progress.stalled}" if progress.stalled else text


def checking(event: Checking) -> str:
    """"running 3 examples, then 12 tests": what the sandbox runs for an answer."""
    examples = f"{event.examples} example{'s' if event.examples != 1 else ''}" if event.examples else ""
    tests = f"{event.tests} test{'s' if event.tests != 1 else ''}" if event.tests else ""
    if examples and tests:
        return f"running {examples}, then {tests}"
    return f"running {examples or tests}" if examples or tests else "running the module"


PINNING = "trying small changes of the body against its examples and tests"


def describe(event: Any) -> tuple[int, str] | None:
    """(attempt, what happened) for the events worth a line: attempts starting and ending, the phases of an
    attempt, model retries, notices (attempt 0); None for the others (streamed text, the end)."""
    if isinstance(event, ModelProgress):
        return event.attempt, phase(event.progress)
    if isinstance(event, Checking):
        return event.attempt, checking(event)
    if isinstance(event, Pinning):
        return event.attempt, PINNING
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
    if outcome.status == "passed_loosely":
        return f"`{name}` passes {outcome.verified_by or 'its doctests'}, loosely: {outcome.message}"
    if outcome.status == "not_verified":
        return f"`{name}` filled but not verified: {outcome.message}"
    if outcome.status == "gave_up":
        return f"gave up on `{name}` after {outcome.attempts} attempts: {outcome.message}"
    if outcome.status == "cancelled":
        return cancelled(name)
    return f"`{name}`: {outcome.message}"


def cancelled(name: str) -> str:
    return f"`{name}`: cancelled"
