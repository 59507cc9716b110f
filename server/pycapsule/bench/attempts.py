"""One task's generation: the self-debugging loop's events folded into a record (no score yet).

The bench drives the very loop the CLI and the editor use (`Engine.generate` -> `loop.self_debug`);
this module only listens to its events.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from pycapsule.bench.records import TaskRecord
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import Capsule
from pycapsule.debugging.signature import SignatureMismatch, splice
from pycapsule.loop import AttemptFinished, AttemptStarted, Event, Finished

# attempts whose answer never became a module (nothing the scorer could run)
_UNRUNNABLE = ("no_code", "signature")


def candidate_module(capsule: Capsule, code: str) -> str | None:
    """The prompt module with `code`'s body in place, as the loop builds it; None if it does not fit."""
    try:
        return splice(capsule, code).new_source
    except SignatureMismatch:
        return None


def fold_events(task: BenchTask, capsule: Capsule, events: Iterable[Event]) -> TaskRecord:
    """Consume one run of the loop; the record's final code is the loop's answer, else its last usable try."""
    record = TaskRecord(task_id=task.task_id, prompt_key=task.prompt_key, status="failed")
    began = time.monotonic()
    last_usable: str | None = None
    for event in events:
        if isinstance(event, AttemptStarted) and event.attempt > 0:
            record.model_calls += 1
        elif isinstance(event, AttemptFinished) and event.attempt > 0:
            record.attempts = event.attempt
            record.prompt_tokens += event.usage.prompt_tokens
            record.completion_tokens += event.usage.completion_tokens
            record.headlines.append(event.headline or event.verdict)
            record.codes.append(event.code)
            if event.passed and event.verdict == "passed" and record.passed_attempt is None:
                record.passed_attempt = event.attempt
            if event.verdict not in _UNRUNNABLE:
                last_usable = event.code
        elif isinstance(event, Finished):
            outcome = event.outcome
            record.outcome, record.outcome_message = outcome.status, outcome.message
            record.attempts = max(record.attempts, outcome.attempts)
            record.final_code = outcome.new_source
    if record.final_code is None and last_usable is not None:
        record.final_code = candidate_module(capsule, last_usable)
    record.generation_seconds = round(time.monotonic() - began, 3)
    return record
