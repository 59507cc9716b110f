"""The self-debugging loop: generate -> check in the sandbox -> condense -> fix, as a stream of events.

It knows nothing of the terminal or the editor: the CLI and the language server both iterate the
events `self_debug` yields. Attempts are numbered from 1; in fix-from-current-body mode the current
code is checked first as attempt 0 (mode "check"), which asks no model. Every request has its own seed.

A run is put together from parts with one job each: `attempt_policy` (what to ask the model next:
prompts, temperatures, fix turns or restarts, prefill), `reply_reading` (the answer's code spliced into
the module), `judge` (what that module comes to: examples, the project's tests, a fresh re-check, the
mutation check), `run_record` (the history's rows) and `outcome_text` (the words of the outcome). This
module runs the attempts in order and says what happens as events.

An answer whose code this run already tried, when that code's verdict was its own, is not run again: it
counts as an attempt, with the earlier attempt's result and `repeated` naming it (`judge.REPEATABLE`).

An attempt whose failing examples all fail only for what the sandbox lacks (the network, a file the
docstring names: `debugging.sandbox_lacks`) ends the run as `not_verified` with its body: no answer can
make those examples pass here, so feeding them back would only spend attempts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import replace

from pycapsule import outcome_text
from pycapsule.attempt_policy import REPEAT_HEAT as REPEAT_HEAT
from pycapsule.attempt_policy import AttemptPolicy, Request
from pycapsule.capsule import Capsule
from pycapsule.config import Settings, project_root
from pycapsule.debugging.answer_watch import AnswerTarget
from pycapsule.debugging.errors import headline
from pycapsule.debugging.same_code import code_key
from pycapsule.debugging.signature import TextEdit
from pycapsule.events import (
    AttemptFinished,
    AttemptStarted,
    Closest,
    Event,
    Finished,
    ModelProgress,
    ModelRetrying,
    Notice,
    Outcome,
    TokensStreamed,
    Unavailable,
)
from pycapsule.executor import job_for
from pycapsule.generators import Returning
from pycapsule.history import History
from pycapsule.judge import AttemptResult, Judge
from pycapsule.model_client import Cancelled, EndpointError, ModelError, Programmer, Reply, Retrying, Usage
from pycapsule.model_progress import Progress
from pycapsule.outcome_text import Told
from pycapsule.prompts import function_head, whole_answer
from pycapsule.reply_reading import as_far_as_it_went, read_reply
from pycapsule.run_record import RunRecorder
from pycapsule.sandbox.api import RunResult, Sandbox, SandboxUnavailable
from pycapsule.strength.check import Strength
from pycapsule.strength.rivals import Rival, earlier_rivals
from pycapsule.tests_job import ProjectTests

ENDPOINT_FAILURES: tuple[type[Exception], ...] = (EndpointError,)
"""Failures that make the model unusable for the rest of a run (every target after it would fail the
same way). The one place that decides it: the programmer raises `EndpointError` after its own retries."""


def unavailable_part(error: Exception) -> Unavailable | None:
    """Which part of the engine `error` shows to be out of use for the rest of a run, if any."""
    if isinstance(error, ENDPOINT_FAILURES):
        return "model"
    if isinstance(error, SandboxUnavailable):
        return "sandbox"
    return None


def _distance(result: AttemptResult) -> tuple[float, float] | None:
    """How far a failed try is from passing: (examples failing, project tests failing); None when its run
    did not say (it crashed, timed out, or its answer was no code)."""
    if result.tests is not None and result.tests.problem is None:
        return 0, result.tests.failed
    if result.failed_examples is not None:
        return result.failed_examples, float("inf")
    return None


def self_debug(
    capsule: Capsule,
    *,
    programmer: Programmer,
    sandbox: Sandbox,
    settings: Settings,
    start_body: str | None = None,
    cancel: threading.Event | None = None,
    context: str | None = None,
    history: History | None = None,
    tests: ProjectTests | None = None,
) -> Iterator[Event]:
    """Events up to and including one `Finished`; never raises for model, code or sandbox failures.
    `tests`: the project's tests of the capsule, run on every body whose examples pass (or that has none)."""
    run = _Run(capsule, programmer, sandbox, settings, cancel or threading.Event(), context, history, tests)
    return run.events(start_body)


def first_request(capsule: Capsule, *, programmer: Programmer, settings: Settings, context: str | None = None,
                  history: History | None = None) -> list[dict[str, str]]:
    """The messages of a stub's first attempt, as `self_debug` will send them: what a read-ahead reads."""
    policy = AttemptPolicy(capsule, settings, context, programmer.settings.local)
    policy.learn(RunRecorder(history, capsule).earlier_tries())
    return policy.request(1).messages


def import_problem(capsule: Capsule, sandbox: Sandbox, settings: Settings,
                   cancel: threading.Event | None = None) -> tuple[str | None, RunResult]:
    """One sentence when the module cannot be imported for a reason outside the target function (a
    missing package, a failing statement elsewhere): no body can fix that, so no model is asked."""
    job = replace(job_for(capsule, capsule.module_source, settings.job_timeout, project_root(capsule.path)),
                  doctest_targets=(), doctests=())
    result = sandbox.run(job, cancel)
    if result.status in ("ok", "cancelled"):  # cancelled: the caller sees its own cancel and stops
        return None, result
    error = result.module_error
    if error is not None and error.line is not None and capsule.def_line <= error.line <= capsule.end_line:
        return None, result  # the target's own code: the model's to fix
    if error is None:
        return (f"{capsule.qualname}: the module cannot be run as it stands ({headline(result)}); "
                "fix that first"), result
    where = error.origin or (f"line {error.line}" if error.line else "its imports")
    message = " ".join(error.message.split())[:300]
    return (f"{capsule.qualname}: the module cannot be imported ({where}: {error.type}: {message}); this is "
            "outside the function, so no model was asked"), result


class _Run:
    """One run of the loop: the attempts in order, each asked, judged, recorded and told as events."""

    def __init__(self, capsule: Capsule, programmer: Programmer, sandbox: Sandbox, settings: Settings,
                 cancel: threading.Event, context: str | None, history: History | None,
                 tests: ProjectTests | None = None) -> None:
        self.capsule, self.programmer, self.settings, self.cancel = capsule, programmer, settings, cancel
        self.started = time.monotonic()
        self.usage = Usage()
        self.attempts = 0
        self.judge = Judge(capsule, sandbox, settings, cancel, tests)
        self.recorder = RunRecorder(history, capsule)
        self.policy = AttemptPolicy(capsule, settings, context, programmer.settings.local)
        self.answer_target = AnswerTarget(capsule.name, capsule.module_source, context or "",
                                          function_head(capsule))
        """What the model's answers are read for: reading stops once the function is complete (and an
        answer that repeats its head may be given the rest of it)."""
        self.seed_base = self.recorder.attempts_before()
        self.original_body: str | None = None
        """A repair (the function had a body, which failed): that body."""
        self.passing: list[tuple[int, AttemptResult]] = []
        """The model's bodies that passed, with their attempts, in order: those that passed their examples
        only as written (not with iterators; the first is the result if none does better), then the one
        that passed (`AttemptFinished.passed`), which ends the run."""
        self.closest: tuple[tuple[float, float, int], Closest] | None = None
        """The nearest try so far by `_distance`, for a run that gives up."""

    def events(self, start_body: str | None) -> Iterator[Event]:
        try:
            yield from self._events(start_body)
        except Cancelled:
            yield self._finish(outcome_text.cancelled(self.attempts))
        except ModelError as error:
            yield self._finish(Told("error", str(error)), unavailable=unavailable_part(error))

    def _events(self, start_body: str | None) -> Generator[Event, None, None]:
        if start_body is not None and not self.capsule.is_stub:
            current = yield from self._check_current(start_body)
            if current is None:
                return
            self.original_body = start_body
            self._learn_from_earlier_runs()  # bodies earlier runs tried are not run again
            self.policy.repair(current)  # the request names the current body's failure, the one to fix
        else:
            self.policy.learn(self._learn_from_earlier_runs())
        final: AttemptResult | None = None
        for attempt in range(1, self.settings.max_attempts + 1):
            if self.cancel.is_set():
                raise Cancelled()
            request = self.policy.request(attempt)
            result, finished = yield from self._attempt(attempt, request)
            if finished.passed:
                self.passing.append((attempt, result))
                yield from self._success(result, attempt)
                return
            final = result
            if result.examples_passed and result.repeated is None:
                self.passing.append((attempt, result))
            self._consider(attempt, result)
            self.policy.failed(result, request)
        if self.passing:  # the first that passed its examples as written
            yield from self._success(self.passing[0][1], self.passing[0][0])
            return
        yield self._finish(outcome_text.gave_up(self.capsule.qualname, self.attempts,
                                                final.headline if final is not None else None),
                           closest=self.closest[1] if self.closest else None)

    def _attempt(self, attempt: int, request: Request
                 ) -> Generator[Event, None, tuple[AttemptResult, AttemptFinished]]:
        """Attempt `attempt`: `request` asked, its answer judged and recorded, each step told as events."""
        yield AttemptStarted(attempt, self.settings.max_attempts, request.mode)
        began = time.monotonic()
        self.attempts = attempt
        reply = yield from self._ask(attempt, request)
        model_seconds = time.monotonic() - began
        self.usage = self.usage + reply.usage
        yield self.judge.checking(attempt)
        result = self._try(reply, attempt)
        finished = self.recorder.attempt_finished(attempt, request.mode, result, reply.usage, reply.model,
                                                  began, model_seconds)
        yield from self._new_warnings()
        yield finished
        return result, finished

    def _second_opinions(self, result: AttemptResult, strength: Strength | None
                         ) -> Generator[Event, None, Strength | None]:
        """`strength` of the passing body `result`, compared with fresh answers (`second_opinions` of them,
        within `max_attempts`) when its examples and tests leave it open; each answer is an attempt of its
        own (asked as a restart, recorded), and one that passes as well is a rival."""
        if strength is None or not (strength.survivors or strength.raised_on) or result.new_source is None:
            return strength
        last = min(self.settings.max_attempts, self.attempts + self.settings.second_opinions)
        rivals: list[Rival] = []
        for attempt in range(self.attempts + 1, last + 1):
            if attempt == self.attempts + 1:
                yield Notice(f"{self.capsule.qualname}: its examples and tests leave it open "
                             f"({strength.describe()}): asking for another answer to compare")
            other, finished = yield from self._attempt(attempt, self.policy.second_opinion())
            if (finished.passed and other.new_source is not None
                    and code_key(other.new_source) != code_key(result.new_source)):
                rivals.append(Rival(other.new_source, f"attempt {attempt}'s answer"))
        return self.judge.compared(strength, result, rivals)

    def _learn_from_earlier_runs(self) -> list[AttemptResult]:
        """The bodies earlier runs of this function tried and saw fail, marked tried for the judge."""
        earlier = self.recorder.earlier_tries()
        for result in earlier:
            self.judge.remember(result)
        return earlier

    def _consider(self, attempt: int, result: AttemptResult) -> None:
        """Keep `result` as the nearest try when it is nearer than the one kept (a later one wins a tie)."""
        distance = _distance(result)
        if distance is None or result.new_source is None or result.repeated is not None:
            return
        key = (*distance, -attempt)
        if self.closest is None or key < self.closest[0]:
            near = distance[0] == 1 or (distance[0] == 0 and distance[1] <= 1)
            self.closest = (key, Closest(attempt, result.code, result.new_source, result.headline, near,
                                         result.edits))

    def _ask(self, attempt: int, request: Request) -> Generator[Event, None, Reply]:
        # Seeded so that a run repeats exactly (a benchmark, a test, a bug report); a run of a function
        # with attempts in the history goes on from new seeds, so asking again gives new answers.
        answer = Returning(self.programmer.stream(request.messages, temperature=request.temperature,
                                                  seed=self.seed_base + attempt, cancel=self.cancel,
                                                  progress=True, target=self.answer_target))
        for item in answer:
            if isinstance(item, Retrying):
                yield ModelRetrying(attempt, item.reason, item.delay)
            elif isinstance(item, Progress):
                yield ModelProgress(attempt, item)
            else:
                yield TokensStreamed(attempt, item)
        if request.prefix is not None:
            return replace(answer.value, text=whole_answer(request.prefix, answer.value.text))
        return answer.value

    def _try(self, reply: Reply, attempt: int) -> AttemptResult:
        """Reply -> code -> spliced module -> verdict; unusable answers become failed attempts."""
        read = read_reply(reply, self.capsule)
        if isinstance(read, AttemptResult):
            return read
        code, spliced = read
        result = self.judge.result_of(attempt, code, spliced.new_source, spliced.edits)
        return as_far_as_it_went(result, reply)

    def _check_current(self, start_body: str) -> Generator[Event, None, AttemptResult | None]:
        """Attempt 0: run the current code. None when it already passes (the run is then finished)."""
        capsule, text = self.capsule, self.capsule.module_source
        source = text[: capsule.body_start] + start_body + text[capsule.body_end:]
        code = source[capsule.header_start: capsule.body_start + len(start_body)]
        yield AttemptStarted(0, self.settings.max_attempts, "check")
        began = time.monotonic()
        result = self.judge.result_of(0, code, source, ())
        finished = self.recorder.attempt_finished(0, "check", result, Usage(), "", began, 0.0)
        yield from self._new_warnings()
        yield finished
        if not finished.passed:
            return result
        if result.verdict == "passed":
            what, _ = self.judge.what_ran(result)
            strength = yield from self.judge.strength(result, 0, self._rivals(result))
            told = outcome_text.already_passes(capsule.qualname, what, strength, self.judge.loose(strength))
        else:
            told = outcome_text.already_runs(capsule.qualname,
                                             result.headline or outcome_text.unverified(capsule))
        yield self._finish(told, result_attempt=0)
        return None

    def _success(self, result: AttemptResult, attempt: int) -> Generator[Event, None, None]:
        """The end of a run whose result is `result`, the body of attempt `attempt`."""
        name = self.capsule.qualname
        if result.examples_passed:
            what, _ = self.judge.what_ran(result)
            told = outcome_text.passed_as_written(name, what, result.headline)
        elif result.verdict == "passed":
            what, weak = self.judge.what_ran(result)
            attempts = self.attempts
            strength = yield from self.judge.strength(result, attempt, self._rivals(result))
            strength = yield from self._second_opinions(result, strength)
            told = outcome_text.passed(name, what, weak, strength, self.judge.loose(strength), attempts,
                                       self._size(result))
        else:
            told = outcome_text.not_verified(name, result.headline or outcome_text.unverified(self.capsule))
        yield self._finish(told, result.new_source, result.edits, result_attempt=attempt)

    def _rivals(self, result: AttemptResult) -> list[Rival]:
        """The bodies earlier runs of the function passed, other than `result`'s: where they still pass and
        show something else, the result says so (`pycapsule.strength.rivals`)."""
        if result.new_source is None:
            return []
        return earlier_rivals(self.recorder.history, self.capsule, result.new_source)

    def _size(self, result: AttemptResult) -> str:
        """For a repair: how much of the body it changed ('; it changed 1 of 9 body lines')."""
        if self.original_body is None or result.new_source is None:
            return ""
        return outcome_text.changed(self.capsule, self.original_body, result.new_source)

    def _new_warnings(self) -> Iterator[Notice]:
        """The sandbox's warnings (e.g. an unreadable project folder), each said once per run."""
        for warning in self.judge.unsaid_warnings():
            yield Notice(warning)

    def _finish(self, told: Told, new_source: str | None = None, edits: tuple[TextEdit, ...] = (), *,
                result_attempt: int | None = None, unavailable: Unavailable | None = None,
                closest: Closest | None = None) -> Finished:
        """The run's outcome; what verified its result (if any) is told on that attempt's history row."""
        if result_attempt is not None and told.verification:
            self.recorder.conclude(result_attempt, told.verification)
        seconds = time.monotonic() - self.started
        return Finished(Outcome(told.status, told.message, new_source, edits, self.attempts,
                                self.capsule.qualname, self.usage, seconds, unavailable,
                                verified_by=told.verified_by, run_id=self.recorder.run_id,
                                result_attempt=result_attempt, verification=told.verification,
                                closest=closest, strength=told.strength))
