"""Which code a self-debugging run is scored with when no attempt passed the prompt's examples."""

from __future__ import annotations

from pycapsule.bench.attempts import fold_events
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import capsule_by_qualname
from pycapsule.events import AttemptFinished, AttemptStarted, Event, Finished, Outcome
from pycapsule.model_client import Usage

PROMPT = 'def add(a, b):\n    """Add.\n\n    >>> add(1, 2)\n    3\n    >>> add(-1, 1)\n    0\n    """\n'
TASK = BenchTask("humaneval", "T/0", "add", PROMPT, "assert add(2, 2) == 4\n", PROMPT + "    return a + b\n")


def _run(*attempts: tuple[str, str, int | None]) -> list[Event]:
    """A run that gave up: each attempt as (verdict, body, failed examples)."""
    events: list[Event] = []
    for number, (verdict, body, failed) in enumerate(attempts, 1):
        code = f"def add(a, b):\n    {body}\n"
        events += [AttemptStarted(number, len(attempts), "generate" if number == 1 else "restart"),
                   AttemptFinished(number, False, "doctest failed", "", code, Usage(10, 5), 1.0, verdict,
                                   failed_examples=failed)]
    return [*events, Finished(Outcome("gave_up", "still failing", None, (), len(attempts)))]


def _scored_body(events: list[Event]) -> str:
    record = fold_events(TASK, capsule_by_qualname(PROMPT, "add"), events)
    assert record.final_code is not None
    return record.final_code.split('"""\n')[-1].strip()


def test_the_attempt_that_failed_the_fewest_examples_is_scored() -> None:
    events = _run(("failed", "return a - b", 2), ("failed", "return a + b if a > 0 else 5", 1),
                  ("failed", "return a * b", 2))
    assert _scored_body(events) == "return a + b if a > 0 else 5"


def test_among_equals_the_earliest_attempt_is_scored() -> None:
    events = _run(("failed", "return a + b + 0", 1), ("failed", "return a * b", 1))
    assert _scored_body(events) == "return a + b + 0"


def test_an_attempt_whose_examples_could_not_all_run_comes_after_any_that_ran() -> None:
    events = _run(("timeout", "while True: pass", None), ("failed", "return a - b", 2),
                  ("signature", "return a + b", None))
    assert _scored_body(events) == "return a - b"
    record = fold_events(TASK, capsule_by_qualname(PROMPT, "add"), events)
    assert record.examples_failed == [None, 2, None]


def test_the_raw_reply_is_kept_for_answers_that_yielded_no_function_only() -> None:
    """The streamed reply (what the model wrote, not the loop's cut of it), for no_code and unparseable
    answers; a retried call's void text is dropped; the home folder is taken out."""
    from pathlib import Path

    from pycapsule.events import ModelRetrying, TokensStreamed

    home = str(Path.home())
    reply = f"Here it is, see {home}/x:\n```python\ndef add(a, b)\n    return a + b\n```\n"
    events: list[Event] = [
        AttemptStarted(1, 3, "generate"), TokensStreamed(1, "void"), ModelRetrying(1, "busy", 1.0),
        *[TokensStreamed(1, piece) for piece in (reply[:20], reply[20:])],
        AttemptFinished(1, False, "no usable code in the answer: not valid Python", "", reply[:10],
                        Usage(10, 5), 1.0, "no_code"),
        AttemptStarted(2, 3, "restart"), TokensStreamed(2, "```python\ndef other(a, b): return 1\n```"),
        AttemptFinished(2, False, "the code does not fit `add`: The reply does not define the function add",
                        "", "def other(a, b): return 1\n", Usage(10, 5), 1.0, "signature"),
        AttemptStarted(3, 3, "restart"), TokensStreamed(3, "def add(a): return a"),
        AttemptFinished(3, False, "the code does not fit `add`: The reply's add has 1 parameter(s)", "",
                        "def add(a): return a\n", Usage(10, 5), 1.0, "signature"),
        Finished(Outcome("gave_up", "still failing", None, (), 3)),
    ]
    record = fold_events(TASK, capsule_by_qualname(PROMPT, "add"), events)
    assert record.replies == {"1": reply.replace(home, "~"),
                              "2": "```python\ndef other(a, b): return 1\n```"}
