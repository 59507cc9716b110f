"""One task's generation: the self-debugging loop's events folded into a record (no score yet).

The bench drives the very loop the CLI and the editor use (`Engine.generate` -> `loop.self_debug`);
this module only listens to its events.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace

from pycapsule.bench.lost_answers import not_parseable, scrub
from pycapsule.bench.records import TaskRecord
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import Capsule
from pycapsule.debugging.signature import SignatureMismatch, splice
from pycapsule.events import AttemptFinished, AttemptStarted, Event, Finished, ModelRetrying, TokensStreamed

# attempts whose answer never became a module (nothing the scorer could run)
_UNRUNNABLE = ("no_code", "signature")


def candidate_module(capsule: Capsule, code: str) -> str | None:
    """The prompt module with `code`'s body in place, as the loop builds it; None if it does not fit."""
    try:
        return splice(capsule, code).new_source
    except SignatureMismatch:
        return None


def fold_events(task: BenchTask, capsule: Capsule, events: Iterable[Event]) -> TaskRecord:
    """Consume one run of the loop; the record's final code is the loop's answer, else the attempt that
    failed the fewest of the prompt's examples (the earliest of equals: the greedy first answer wins ties)."""
    record = TaskRecord(task_id=task.task_id, prompt_key=task.prompt_key, status="failed",
                        function=capsule.name)
    began = time.monotonic()
    best: tuple[tuple[bool, int, int], str] | None = None
    streamed: dict[int, list[str]] = {}  # each attempt's reply as the model streamed it
    folders = [capsule.path.parent] if capsule.path is not None else []
    for event in events:
        if isinstance(event, AttemptStarted) and event.attempt > 0:
            record.model_calls += 1
        elif isinstance(event, TokensStreamed):
            streamed.setdefault(event.attempt, []).append(event.text)
        elif isinstance(event, ModelRetrying):
            streamed.pop(event.attempt, None)  # the text streamed so far is void
        elif isinstance(event, AttemptFinished) and event.attempt > 0:
            record.attempts = event.attempt
            record.prompt_tokens += event.usage.prompt_tokens
            record.completion_tokens += event.usage.completion_tokens
            record.headlines.append(event.headline or event.verdict)
            record.codes.append(event.code)
            record.verdicts.append(event.verdict)
            record.attempt_tokens.append([event.usage.prompt_tokens, event.usage.completion_tokens])
            record.attempt_seconds.append(round(event.seconds, 3))
            record.examples_failed.append(event.failed_examples)
            if not_parseable(event.verdict, event.headline):
                reply = "".join(streamed.get(event.attempt, ())) or event.code
                record.replies[str(event.attempt)] = scrub(reply, folders)
            if event.passed and event.verdict == "passed" and record.passed_attempt is None:
                record.passed_attempt = event.attempt
            if event.verdict not in _UNRUNNABLE:
                failed = event.failed_examples
                rank = (failed is None, failed or 0, event.attempt)
                if best is None or rank < best[0]:
                    best = (rank, event.code)
        elif isinstance(event, Finished):
            outcome = event.outcome
            record.outcome, record.outcome_message = outcome.status, outcome.message
            record.attempts = max(record.attempts, outcome.attempts)
            record.final_code = outcome.new_source
            if outcome.outside_target:  # the task's own module cannot run here: not the model's failure
                record.status, record.detail = "unscorable", outcome.message
    if record.final_code is None and best is not None:
        record.final_code = candidate_module(capsule, best[1])
    record.generation_seconds = round(time.monotonic() - began, 3)
    return record


def first_attempt(record: TaskRecord, capsule: Capsule) -> TaskRecord | None:
    """A self-debugging record cut to its first attempt: what a direct run with the same first-attempt
    settings generates (the same request). None when the record does not say what attempt 1 cost."""
    if not (record.codes and record.verdicts and record.attempt_tokens and record.attempt_seconds):
        return None
    passed = record.verdicts[0] in ("passed", "not_verified")
    headline = record.headlines[0] if record.headlines else ""
    if passed:
        final_code = record.final_code
    elif record.verdicts[0] in _UNRUNNABLE:
        final_code = None
    else:
        final_code = candidate_module(capsule, record.codes[0])
    prompt_tokens, completion_tokens = record.attempt_tokens[0]
    return replace(
        record, outcome=record.outcome if passed else "gave_up",
        outcome_message=record.outcome_message if passed else headline, attempts=1,
        passed_attempt=1 if record.passed_attempt == 1 else None, model_calls=1, verdicts=record.verdicts[:1],
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        generation_seconds=record.attempt_seconds[0], headlines=record.headlines[:1], codes=record.codes[:1],
        attempt_tokens=record.attempt_tokens[:1], attempt_seconds=record.attempt_seconds[:1],
        examples_failed=record.examples_failed[:1],
        replies={key: reply for key, reply in record.replies.items() if key == "1"}, final_code=final_code)
