"""A self-debugging run's rows in the history (`pycapsule.history`), and what it reads of earlier runs.

Every attempt is recorded as it ends; when the run ends, what verified its result
(`Outcome.verification`: 'verified by 1 example + 2 tests (...)', 'only weakly verified by ...', 'not
verified: ...') is told on the row of the attempt that produced it. The CLI and the language server both
run the loop, so both record it here. A history that cannot be read or written (a full disk, a locked
file) is logged and passed over: it must not cost the user the result.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

from pycapsule.capsule import Capsule, CapsuleError
from pycapsule.debugging.errors import shorten
from pycapsule.debugging.signature import SignatureMismatch, splice
from pycapsule.event_text import repeated as repeated_text
from pycapsule.events import AttemptFinished, Mode
from pycapsule.history import AttemptRecord, History, function_path
from pycapsule.judge import AttemptResult
from pycapsule.model_client import Usage

log = logging.getLogger(__name__)

EARLIER_RUNS_READ = 20
"""History rows of a function read when a new run of it starts."""
EARLIER_FAILURE_CHARS = 200

_T = TypeVar("_T")


class RunRecorder:
    """One run of one function in the history (none: records nothing, reads nothing)."""

    def __init__(self, history: History | None, capsule: Capsule) -> None:
        self.history, self.capsule = history, capsule
        self.run_id = uuid.uuid4().hex

    def attempt_finished(self, attempt: int, mode: Mode, result: AttemptResult, usage: Usage, model: str,
                         began: float, model_seconds: float) -> AttemptFinished:
        """The event of an attempt that ended with `result`, recorded first."""
        seconds = time.monotonic() - began
        condensed = result.condensed
        if result.repeated is not None:
            condensed = f"{repeated_text(result.repeated)}\n{condensed}"
        record = AttemptRecord(
            path=function_path(self.capsule.path), qualname=self.capsule.qualname, run_id=self.run_id,
            attempt=attempt, mode=mode, verdict=result.verdict, code=result.code, condensed=condensed,
            model=model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            model_seconds=model_seconds, check_seconds=seconds - model_seconds, created=time.time())
        self._safely("record the attempt", lambda history: history.record(record), None)
        passed = result.verdict in ("passed", "not_verified")
        return AttemptFinished(attempt, passed, result.headline, condensed, result.code, usage,
                               seconds, result.verdict, model_seconds, result.failed_examples,
                               result.condensed if result.shown is None else result.shown, result.repeated)

    def conclude(self, attempt: int, verification: str) -> None:
        """What verified the run's result, told on the row of `attempt`, which produced it."""
        self._safely("record the result",
                     lambda history: history.conclude(self.run_id, attempt, verified=verification), None)

    def earlier_tries(self) -> list[AttemptResult]:
        """The bodies earlier runs of this function tried and saw fail, newest first, each as its result:
        the module it makes now, and its failure in one line as the headline."""
        if self.capsule.path is None:
            return []
        path, qualname = self.capsule.path, self.capsule.qualname
        records = self._safely("read the history",
                               lambda history: history.attempts(path, qualname, limit=EARLIER_RUNS_READ), [])
        tries = []
        for record in records:
            if record.verdict in ("passed", "not_verified") or not record.code or record.mode == "check":
                continue
            try:
                source = splice(self.capsule, record.code).new_source
            except (SignatureMismatch, CapsuleError):
                continue
            failure = shorten(" ".join(record.condensed.split()), EARLIER_FAILURE_CHARS)
            tries.append(AttemptResult(record.code, record.verdict, failure, record.condensed, source))
        return tries

    def attempts_before(self) -> int:
        """How many attempts at this function the history holds."""
        if self.capsule.path is None:  # no file (a bench task): nothing to go on from
            return 0
        path, qualname = self.capsule.path, self.capsule.qualname
        return self._safely("read the history", lambda history: history.count(path, qualname), 0)

    def _safely(self, doing: str, call: Callable[[History], _T], otherwise: _T) -> _T:
        """`call` on the history; `otherwise` when there is none or it fails."""
        if self.history is None:
            return otherwise
        try:
            return call(self.history)
        except sqlite3.Error as error:
            log.warning("pycapsule: could not %s in %s: %s", doing, self.history.path, error)
            return otherwise
