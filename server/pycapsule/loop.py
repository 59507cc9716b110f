"""The self-debugging loop: generate -> check in the sandbox -> condense -> fix, as a stream of events.

It knows nothing of the terminal or the editor: the CLI and the language server both iterate the
events `self_debug` yields. Attempts are numbered from 1; in fix-from-current-body mode the current
code is checked first as attempt 0 (mode "check"), which asks no model. After `restart_after` failed
fixes in a row the next attempt starts over from a fresh conversation (mode "restart") that names the
earlier failures but does not show their code: small models copy a wrong idea once it is in their
context (docs/results). `restart_after = 0` makes every retry a restart.

An answer whose code this run already tried (the same module once spliced, layout and comments aside:
`debugging.same_code`) is not run again when that code's verdict was its own (`REPEATABLE`): it counts
as an attempt, with the earlier attempt's result and `repeated` naming it. It adds nothing to the
conversation: the next request is the one that got it plus one sentence saying it repeated code that
failed, sampled `REPEAT_HEAT` hotter than that request (at most 1.0, never below `retry_temperature`),
with its own seed as every request has.

A function that already has a body is repaired, not rewritten: after attempt 0 every attempt shows the
model that body with its failure and asks for the smallest change (`prompts.repair_messages`); earlier
failed changes are named by their headlines only.

With the project's tests (`tests_job.ProjectTests`), a body whose examples pass (or that has none) passes
only when those tests pass too; their failure is the attempt's, condensed like a doctest failure.

Every attempt is recorded in the history as it ends; when the run ends, what verified its result
(`Outcome.verification`: 'verified by 1 example + 2 tests (...)', 'only weakly verified by ...', 'not
verified: ...') is told on the row of the attempt that produced it. The CLI and the language server both
run this loop, so both record it here.

An attempt whose failing examples all fail only for what the sandbox lacks (the network, a file the
docstring names: `debugging.sandbox_lacks`) ends the run as `not_verified` with its body: no answer can
make those examples pass here, so feeding them back would only spend attempts.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace

from pycapsule.capsule import Capsule, CapsuleError, capsule_by_qualname
from pycapsule.config import Settings, project_root
from pycapsule.debugging.answer_watch import AnswerTarget
from pycapsule.debugging.change_size import change_size
from pycapsule.debugging.errors import headline, shorten
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import NoCodeError, extract_code
from pycapsule.debugging.iterator_examples import iterator_examples
from pycapsule.debugging.same_code import code_key
from pycapsule.debugging.signature import SignatureMismatch, TextEdit, splice
from pycapsule.doc_examples import describe, doc_examples
from pycapsule.event_text import repeated as repeated_text
from pycapsule.events import (
    AttemptFinished,
    AttemptStarted,
    Checking,
    Closest,
    Event,
    Finished,
    Mode,
    ModelProgress,
    ModelRetrying,
    Notice,
    Outcome,
    Pinning,
    Status,
    TokensStreamed,
    Unavailable,
)
from pycapsule.executor import Verdict, execute, job_for, judge
from pycapsule.generators import Returning
from pycapsule.history import AttemptRecord, History, function_path
from pycapsule.model_client import Cancelled, EndpointError, ModelError, Programmer, Reply, Retrying, Usage
from pycapsule.model_progress import Progress
from pycapsule.prompts import (
    answer_prefix,
    fix_messages,
    keep_signature,
    prefilled,
    repair_messages,
    restart_messages,
    whole_answer,
)
from pycapsule.sandbox.api import RunResult, Sandbox, SandboxUnavailable
from pycapsule.strength.check import Strength, assess, measured
from pycapsule.tests_job import ProjectTests, TestsRun, counted, coverage, tests_condensed, tests_headline

log = logging.getLogger(__name__)

REPEAT_HEAT = 0.3
"""How much hotter than the request that got a repeated answer the next request samples (up to 1.0)."""
REPEATABLE = ("failed", "timeout", "memory")
"""Verdicts the same code gets again: the code's own. A job that was killed or crashed the sandbox may
have met a worker that died of something else, so its code is run again when it comes back."""

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


@dataclass
class _Attempt:
    code: str
    verdict: str
    headline: str
    condensed: str
    new_source: str | None = None
    edits: tuple[TextEdit, ...] = ()
    failed_examples: int | None = None
    shown: str | None = None
    """The failure for the user when `condensed` speaks to the model (None: `condensed` itself)."""
    repeated: int | None = None
    """The earlier attempt whose code this is (it was not run again)."""
    examples_passed: bool = False
    """Failed only the examples' iterator version: its examples as written pass."""
    tests: TestsRun | None = None
    """The project's tests, when they ran (only after the examples pass)."""
    example_lines: frozenset[int] = frozenset()
    """Lines of the module its examples ran."""
    example_seconds: float = 0.0
    """How long its examples took in the sandbox."""


EARLIER_RUNS_READ = 20
"""History rows of a function read when a new run of it starts."""
EARLIER_FAILURE_CHARS = 200


def _distance(result: _Attempt) -> tuple[float, float] | None:
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
    run = _Run(capsule, programmer, None, settings, threading.Event(), context, history)  # type: ignore[arg-type]
    return run.prefilled(run.restart_request(run.learn_from_earlier_runs(), None))


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


class _Run:
    def __init__(self, capsule: Capsule, programmer: Programmer, sandbox: Sandbox, settings: Settings,
                 cancel: threading.Event, context: str | None, history: History | None,
                 tests: ProjectTests | None = None) -> None:
        self.capsule, self.programmer, self.sandbox, self.settings = capsule, programmer, sandbox, settings
        self.cancel, self.context, self.history, self.tests = cancel, context, history, tests
        self.run_id = uuid.uuid4().hex
        self.started = time.monotonic()
        self.usage = Usage()
        self.attempts = 0
        self.root = project_root(capsule.path)
        self.docs = doc_examples(capsule.path, capsule.qualname, self.root, capsule.module_source)
        """Its examples in the project's documentation: they run with the docstring's (job_for)."""
        self.verified = capsule.verified_by_doctests or (bool(self.docs) and capsule.doctest_error is None)
        self.iterators = iterator_examples(capsule) if settings.iterator_examples and self.verified else None
        self.original: _Attempt | None = None
        """A repair (the function had a body, which failed): that body's attempt 0."""
        self.original_body = ""
        self.list_only: tuple[int, _Attempt] | None = None
        """The first answer that passed its examples but not with iterators, and its attempt: applied if none
        does better."""
        prefill = settings.answer_prefill == "always" or (
            settings.answer_prefill == "embedded" and programmer.settings.local)
        self.prefix = answer_prefix(capsule) if prefill else None
        self.answer_target = AnswerTarget(capsule.name, capsule.module_source, context or "")
        """What the model's answers are read for: reading stops once the function is complete."""
        """What a stub's first answer starts with, sent as the start of the model's answer (None: not
        prefilled). Only the first: prefilled retries fixed fewer failures (docs/results, "Answer prefill"),
        and a whole answer can define a helper or an import beside the function."""
        self.warnings: list[str] = []
        self.warned = 0
        self.seed_base = self._attempts_before()
        self.closest: tuple[tuple[float, float, int], Closest] | None = None
        """The nearest try so far by `_distance`, for a run that gives up."""
        self.tried: dict[str, tuple[int, _Attempt]] = {}
        """Code this run has run and would get the same verdict again, by `code_key`: the attempt that ran
        it and its result."""

    def events(self, start_body: str | None) -> Iterator[Event]:
        try:
            yield from self._events(start_body)
        except Cancelled:
            yield self._finish("cancelled", f"cancelled after {self.attempts} model attempt(s)")
        except ModelError as error:
            yield self._finish("error", str(error), unavailable=unavailable_part(error))

    def _events(self, start_body: str | None) -> Generator[Event, None, None]:
        capsule, settings = self.capsule, self.settings
        window: list[tuple[str, str]] = []
        last: _Attempt | None = None
        final: _Attempt | None = None
        failed_fixes = 0
        failures: list[str] = []
        repeat: _Attempt | None = None  # the last answer, when it repeated code already tried
        repeat_temperature = 0.0  # the temperature of the request that got it
        if start_body is not None and not capsule.is_stub:
            last = yield from self._check_current(start_body)
            if last is None:
                return
            self.original, self.original_body = last, start_body
            self.learn_from_earlier_runs()  # bodies earlier runs tried are not run again; the request names
            failures.append(last.headline)  # the current body's failure, the one it is asked to fix
        else:
            failures.extend(self.learn_from_earlier_runs())
        for attempt in range(1, settings.max_attempts + 1):
            if self.cancel.is_set():
                raise Cancelled()
            repeated = repeat.headline if repeat is not None else None
            if self.original is not None:  # every attempt a small change to the body as it stands
                mode: Mode = "fix"
                earlier = failures[1:][-(settings.history_window + 1):]
                messages = repair_messages(capsule, self.context, self.original.code, self.original.condensed,
                                           earlier, repeated)
            elif last is None:
                mode = "generate" if attempt == 1 else "restart"
                messages = self.restart_request(failures, repeated)
            else:
                mode = "fix"
                earlier = window[-settings.history_window:] if settings.history_window else []
                messages = fix_messages(capsule, self.context, earlier, last.code, last.condensed, repeated)
            temperature = settings.temperature if attempt == 1 else settings.retry_temperature
            if repeat is not None:
                temperature = max(temperature, min(1.0, repeat_temperature + REPEAT_HEAT))
            yield AttemptStarted(attempt, settings.max_attempts, mode)
            began = time.monotonic()
            self.attempts = attempt
            reply = yield from self._ask(attempt, messages, temperature, prefill=mode == "generate")
            model_seconds = time.monotonic() - began
            self.usage = self.usage + reply.usage
            yield self._checking(attempt)
            result = self._try(reply, attempt)
            finished = self._attempt_finished(attempt, mode, result, reply.usage, reply.model, began,
                                              model_seconds)
            yield from self._new_warnings()
            yield finished
            if finished.passed:
                yield from self._success(result, attempt)
                return
            final = result
            if mode == "fix":
                failed_fixes += 1
            failed_alike = False  # a fresh conversation's answer failed as an earlier attempt did
            if result.repeated is not None:  # nothing new to show the model: the note says it repeated
                repeat, repeat_temperature = result, temperature
            else:
                repeat = None
                if last is not None:
                    window.append((last.code, last.condensed))
                last = result
                failed_alike = mode != "fix" and result.headline in failures
                if result.headline not in failures:
                    failures.append(result.headline)
            if result.examples_passed and self.list_only is None:
                self.list_only = (attempt, result)
            self._consider(attempt, result)
            if failed_alike and settings.fix_repeated_failures:
                continue  # the next attempt is a fix turn of this answer, which shows its failure in full
            if failed_fixes >= settings.restart_after:
                window, last, failed_fixes = [], None, 0
        if self.list_only is not None:
            yield from self._success(self.list_only[1], self.list_only[0])
            return
        yield self._finish("gave_up", f"{capsule.qualname}: still failing after {self.attempts} attempt(s): "
                                      f"{final.headline if final else 'no attempt was made'}",
                           closest=self.closest[1] if self.closest else None)

    def _consider(self, attempt: int, result: _Attempt) -> None:
        """Keep `result` as the nearest try when it is nearer than the one kept (a later one wins a tie)."""
        distance = _distance(result)
        if distance is None or result.new_source is None or result.repeated is not None:
            return
        key = (*distance, -attempt)
        if self.closest is None or key < self.closest[0]:
            near = distance[0] == 1 or (distance[0] == 0 and distance[1] <= 1)
            self.closest = (key, Closest(attempt, result.code, result.new_source, result.headline, near,
                                         result.edits))

    def _ask(self, attempt: int, messages: list[dict[str, str]], temperature: float, *, prefill: bool
             ) -> Generator[Event, None, Reply]:
        # Seeded so that a run repeats exactly (a benchmark, a test, a bug report); a run of a function
        # with attempts in the history goes on from new seeds, so asking again gives new answers.
        prefix = self.prefix if prefill else None
        if prefix is not None:
            messages = prefilled(messages, prefix)
        answer = Returning(self.programmer.stream(messages, temperature=temperature,
                                                  seed=self.seed_base + attempt, cancel=self.cancel,
                                                  progress=True, target=self.answer_target))
        for item in answer:
            if isinstance(item, Retrying):
                yield ModelRetrying(attempt, item.reason, item.delay)
            elif isinstance(item, Progress):
                yield ModelProgress(attempt, item)
            else:
                yield TokensStreamed(attempt, item)
        if prefix is not None:
            return replace(answer.value, text=whole_answer(prefix, answer.value.text))
        return answer.value

    def _checking(self, attempt: int) -> Checking:
        """What the sandbox is about to run for an answer."""
        examples = self._examples()[0] if self.verified else 0
        tests = len(self.tests.selection.node_ids) if self.tests is not None else 0
        return Checking(attempt, examples, tests)

    def _check_current(self, start_body: str) -> Generator[Event, None, _Attempt | None]:
        """Attempt 0: run the current code. None when it already passes (the run is then finished)."""
        capsule, text = self.capsule, self.capsule.module_source
        source = text[: capsule.body_start] + start_body + text[capsule.body_end:]
        code = source[capsule.header_start: capsule.body_start + len(start_body)]
        yield AttemptStarted(0, self.settings.max_attempts, "check")
        began = time.monotonic()
        result = self._judge_once(0, code, source, ())
        finished = self._attempt_finished(0, "check", result, Usage(), "", began, 0.0)
        yield from self._new_warnings()
        yield finished
        if not finished.passed:
            return result
        if result.verdict == "passed":
            what, _ = self._what_ran(result)
            strength = yield from self._strength(result, 0)
            if strength is not None and not self._pinned(strength):
                yield self._finish("passed_loosely", f"{capsule.qualname}: {what} already pass, but "
                                   f"{_loose(strength)}; nothing changed", verified_by=what, result_attempt=0,
                                   verification=f"loosely {_verified(what, strength=strength)}",
                                   strength=strength)
            else:
                yield self._finish("passed", f"{capsule.qualname}: {what} already pass{_noted(strength)}; "
                                   "nothing to change", verified_by=what, result_attempt=0,
                                   verification=_verified(what, strength=strength), strength=strength)
        else:
            unverified = result.headline or self._unverified()
            yield self._finish("not_verified",
                               f"{capsule.qualname}: the module runs but {unverified}; nothing to change",
                               result_attempt=0, verification=_not_verified(unverified))
        return None

    def _try(self, reply: Reply, attempt: int) -> _Attempt:
        """Reply -> code -> spliced module -> verdict; unusable answers become failed attempts."""
        name, reply_text = self.capsule.name, reply.text
        ended = _ended_early(reply)
        try:
            code = strip_example_calls(extract_code(reply_text, name), name)
        except NoCodeError as error:
            error = str(error).rstrip(".")
            headline = f"no usable code in the answer{ended.headline}: {error}"
            return _Attempt(reply_text.strip()[:2000], "no_code", headline,
                            f"Your answer had no usable Python code ({error}).{ended.to_model} Reply with "
                            f"the whole function `{name}` in one ```python code block.",
                            shown=ended.to_user)
        try:
            spliced = splice(self.capsule, code)
        except SignatureMismatch as error:
            error = str(error).rstrip(".")
            return _Attempt(code, "signature", f"the code does not fit `{name}`: {error}",
                            f"The code does not fit the function: {error}.{ended.to_model} "
                            f"{keep_signature(self.capsule)}",
                            shown=ended.to_user)
        result = self._judge_once(attempt, code, spliced.new_source, spliced.edits)
        if ended is _DONE or result.verdict == "passed":
            return result
        # the code ran as far as the answer went: its failure, and why the answer stopped there
        return replace(result, headline=result.headline + ended.headline,
                       condensed=result.condensed + "\n" + ended.to_model.strip(),
                       shown=f"{ended.to_user}\n{result.condensed if result.shown is None else result.shown}")

    def _judge_once(self, attempt: int, code: str, source: str, edits: tuple[TextEdit, ...]) -> _Attempt:
        """The verdict on `source`; for code this run has already run, that attempt's result again."""
        key = code_key(source)
        if key in self.tried:
            earlier, result = self.tried[key]
            return replace(result, repeated=earlier)
        result = self._judge(code, source, edits, with_iterators=attempt > 0)
        if result.verdict in REPEATABLE:
            self.tried[key] = (attempt, result)
        return result

    def _judge(self, code: str, source: str, edits: tuple[TextEdit, ...], with_iterators: bool) -> _Attempt:
        """The verdict on `source`; a model's answer (`with_iterators`) is also run with iterators. A body
        that passes has its examples run once more in a sandbox started for that run alone, so nothing an
        earlier job left in the warm one can have made it pass."""
        attempt = self._judge_warm(code, source, edits, with_iterators)
        if attempt.verdict != "passed" or not self.verified:
            return attempt
        job = replace(job_for(self.capsule, source, self.settings.job_timeout, self.root), fresh=True)
        again = judge(self.capsule, self.sandbox.run(job, self.cancel))
        if self.cancel.is_set():
            raise Cancelled()
        if again.passed:
            return attempt
        why = f"its examples passed in the warm sandbox but not in a fresh one: {again.headline}"
        return _Attempt(code, again.label, why, again.condensed, source, edits)

    def _judge_warm(self, code: str, source: str, edits: tuple[TextEdit, ...],
                    with_iterators: bool) -> _Attempt:
        if self.verified:
            verdict = execute(self.sandbox, self.capsule, source, self.settings.job_timeout, self.root,
                              self.cancel, self.iterators if with_iterators else None, trace_lines=True)
            label = verdict.label
        else:
            verdict = self._run_module(source)
            label = "not_verified" if verdict.passed else verdict.label
        if self.cancel.is_set():
            raise Cancelled()
        self.warnings.extend(w for w in verdict.result.warnings if w not in self.warnings)
        failed = sum(f.failed for f in verdict.result.functions) if verdict.result.status == "ok" else None
        attempt = _Attempt(code, label, verdict.headline, verdict.condensed, source, edits, failed,
                           examples_passed=verdict.examples_passed,
                           example_lines=frozenset(verdict.result.lines_run),
                           example_seconds=verdict.result.duration)
        if self.tests is None or not (verdict.passed or verdict.examples_passed):
            return attempt
        tested = replace(self._run_tests(code, source, edits), example_lines=attempt.example_lines,
                         example_seconds=attempt.example_seconds)
        if verdict.passed or tested.verdict != "passed":
            return tested
        # the examples as written and the project's tests pass; only their iterator version fails
        return replace(attempt, tests=tested.tests)

    def _run_tests(self, code: str, source: str, edits: tuple[TextEdit, ...]) -> _Attempt:
        """The examples passed (or there are none): the project's tests decide."""
        assert self.tests is not None
        run, result = self.tests.run(self.sandbox, source, self.cancel)
        if self.cancel.is_set():
            raise Cancelled()
        if run.ok:
            return _Attempt(code, "passed", "", "", source, edits, 0, tests=run)
        verdict = "timeout" if result.status == "timeout" else "failed"
        return _Attempt(code, verdict, tests_headline(run), tests_condensed(run), source, edits, tests=run)

    def _new_warnings(self) -> Iterator[Notice]:
        """The sandbox's warnings (e.g. an unreadable project folder), each said once per run."""
        for warning in self.warnings[self.warned:]:
            yield Notice(warning)
        self.warned = len(self.warnings)

    def _run_module(self, source: str) -> Verdict:
        """No doctests to run: at least the module must still import."""
        job = replace(job_for(self.capsule, source, self.settings.job_timeout, self.root), doctest_targets=(),
                      documents=())
        return judge(self.capsule, self.sandbox.run(job, self.cancel))

    def _success(self, result: _Attempt, attempt: int) -> Generator[Event, None, None]:
        """The end of a run whose result is `result`, the body of attempt `attempt`."""
        name = self.capsule.qualname
        if result.examples_passed:
            what, _ = self._what_ran(result)
            but = f"but it {result.headline}"
            yield self._finish("passed", f"{name}: {what} pass, {but}", result.new_source, result.edits,
                               verified_by=what, result_attempt=attempt,
                               verification=f"{_verified(what)}, {but}")
        elif result.verdict == "passed":
            what, weak = self._what_ran(result)
            strength = yield from self._strength(result, attempt)
            passed = f"{name}: {what} pass after {self.attempts} attempt(s)"
            verification = _verified(what, weak and strength is None, strength)
            if strength is not None and not self._pinned(strength):
                yield self._finish("passed_loosely", f"{passed}, but {_loose(strength)}{self._size(result)}",
                                   result.new_source, result.edits, verified_by=what, result_attempt=attempt,
                                   verification=f"loosely {verification}", strength=strength)
                return
            if strength is not None:
                notes = _noted(strength)
            else:
                notes = ", but they ran less than half of its lines: only weakly verified" if weak else ""
            yield self._finish("passed", f"{passed}{notes}{self._size(result)}", result.new_source,
                               result.edits, verified_by=what, result_attempt=attempt,
                               verification=verification, strength=strength)
        else:
            why = result.headline or self._unverified()
            yield self._finish("not_verified", f"{name}: body generated but NOT verified: {why}",
                               result.new_source, result.edits, result_attempt=attempt,
                               verification=_not_verified(why))

    def _pinned(self, strength: Strength) -> bool:
        return strength.pinned(self.settings.min_caught, self.settings.strict_signatures)

    def _strength(self, result: _Attempt, attempt: int) -> Generator[Event, None, Strength | None]:
        """How many small changes of the passing body `result` its examples and tests catch, with examples
        that would catch the survivors; None when the check is off or nothing checks the body."""
        tests = self.tests if result.tests is not None and result.tests.ok else None
        if result.new_source is None or not measured(self.settings, self.verified, tests):
            return None
        yield Pinning(attempt)
        ran = result.example_lines | (result.tests.lines_run if result.tests is not None else frozenset())
        strength = assess(self.sandbox, self.capsule, result.new_source, self.settings,
                          examples=self.verified, tests=tests, root=self.root, lines_run=ran,
                          body_seconds=result.example_seconds, cancel=self.cancel)
        if self.cancel.is_set():
            raise Cancelled()
        return strength

    def _size(self, result: _Attempt) -> str:
        """For a repair: how much of the body it changed ('; it changed 1 of 9 body lines')."""
        if self.original is None or result.new_source is None:
            return ""
        try:
            body = capsule_by_qualname(result.new_source, self.capsule.qualname, self.capsule.path).body
        except CapsuleError:
            return ""
        return f"; it {change_size(self.original_body, body).describe()}"

    def _what_ran(self, result: _Attempt) -> tuple[str, bool]:
        """What checked a passing body ('3 examples + 12 tests (tests/test_x.py; 7 of 9 body lines run)',
        the lines counted over the examples and the tests together), and whether those runs ran less than
        half of its lines: weakly verified ('2 examples (1 of 6 body lines run)')."""
        examples, what = self._examples() if self.verified else (0, "")
        if result.new_source is None:
            return what if examples else "nothing", False
        ran = result.example_lines | (result.tests.lines_run if result.tests is not None else frozenset())
        covered = coverage(ran, result.new_source, self.capsule.qualname)
        if result.tests is not None and self.tests is not None:
            parts = [what] if examples else []
            parts.append(self.tests.describe(result.tests, covered))
            return " + ".join(parts), covered.weak
        if not examples:
            return "nothing", False
        if covered.weak:  # said only then: for most functions the examples run every line
            lines = counted(covered.lines, "body line")
            return f"{what} ({covered.ran} of {lines} run)", True
        return what, False

    def _examples(self) -> tuple[int, str]:
        """How many examples run (the docstring's, then the documentation's) and what they are ('1 example +
        2 documentation examples (README.md:12)')."""
        own = sum(not e.skipped for e in self.capsule.examples) if self.capsule.verified_by_doctests else 0
        parts = [counted(own, "example")] if own else []
        if self.docs:
            parts.append(describe(self.docs))
        return own + sum(doc.examples for doc in self.docs), " + ".join(parts)

    def _unverified(self) -> str:
        """Why nothing checks the function (capsule.verified_by_doctests is False)."""
        if self.capsule.doctest_error:
            return f"its docstring's examples cannot be run ({self.capsule.doctest_error})"
        if not self.capsule.examples:
            return "its docstring has no examples"
        return "no example in its docstring checks it (each is skipped or only sets up)"

    def _finish(self, status: Status, message: str, new_source: str | None = None,
                edits: tuple[TextEdit, ...] = (), unavailable: Unavailable | None = None,
                verified_by: str = "", result_attempt: int | None = None, verification: str = "",
                closest: Closest | None = None, strength: Strength | None = None) -> Finished:
        """The run's outcome; what verified its result (if any) is told on that attempt's history row."""
        if result_attempt is not None and verification:
            self._conclude(result_attempt, verification)
        return Finished(Outcome(status, message, new_source, edits, self.attempts, self.capsule.qualname,
                                self.usage, time.monotonic() - self.started, unavailable,
                                verified_by=verified_by, run_id=self.run_id, result_attempt=result_attempt,
                                verification=verification, closest=closest, strength=strength))

    def _attempt_finished(self, attempt: int, mode: Mode, result: _Attempt, usage: Usage, model: str,
                          began: float, model_seconds: float) -> AttemptFinished:
        seconds = time.monotonic() - began
        condensed = result.condensed
        if result.repeated is not None:
            condensed = f"{repeated_text(result.repeated)}\n{condensed}"
        self._record(attempt, mode, result, condensed, usage, model, model_seconds, seconds - model_seconds)
        passed = result.verdict in ("passed", "not_verified")
        return AttemptFinished(attempt, passed, result.headline, condensed, result.code, usage,
                               seconds, result.verdict, model_seconds, result.failed_examples,
                               result.condensed if result.shown is None else result.shown, result.repeated)

    def restart_request(self, failures: list[str], repeated: str | None) -> list[dict[str, str]]:
        """A fresh conversation naming the latest `failures` (with those of earlier runs)."""
        return restart_messages(self.capsule, self.context, failures[-(self.settings.history_window + 1):],
                                repeated)

    def prefilled(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """`messages` with the answer's start, when a stub's first answer is prefilled."""
        return prefilled(messages, self.prefix) if self.prefix is not None else messages

    def learn_from_earlier_runs(self) -> list[str]:
        """What earlier runs of this function found, newest last: how their bodies failed (the first request
        names it), and those bodies marked tried, so an answer repeating one is not run again as new."""
        if self.history is None or self.capsule.path is None:
            return []
        try:
            records = self.history.attempts(self.capsule.path, self.capsule.qualname, limit=EARLIER_RUNS_READ)
        except sqlite3.Error as error:
            log.warning("pycapsule: could not read the history in %s: %s", self.history.path, error)
            return []
        failures: list[str] = []
        for record in records:
            if record.verdict in ("passed", "not_verified") or not record.code or record.mode == "check":
                continue
            try:
                source = splice(self.capsule, record.code).new_source
            except (SignatureMismatch, CapsuleError):
                continue
            failure = shorten(" ".join(record.condensed.split()), EARLIER_FAILURE_CHARS)
            self.tried.setdefault(code_key(source), (-1, _Attempt(record.code, record.verdict, failure,
                                                                  record.condensed, source)))
            if failure and failure not in failures:
                failures.insert(0, failure)
        return failures[-(self.settings.history_window + 1):]

    def _attempts_before(self) -> int:
        if self.history is None or self.capsule.path is None:  # no file (a bench task): nothing to go on from
            return 0
        try:
            return self.history.count(self.capsule.path, self.capsule.qualname)
        except sqlite3.Error as error:
            log.warning("pycapsule: could not read the history in %s: %s", self.history.path, error)
            return 0

    def _record(self, attempt: int, mode: str, result: _Attempt, condensed: str, usage: Usage, model: str,
                model_seconds: float, check_seconds: float) -> None:
        if self.history is None:
            return
        record = AttemptRecord(
            path=function_path(self.capsule.path), qualname=self.capsule.qualname, run_id=self.run_id,
            attempt=attempt, mode=mode, verdict=result.verdict, code=result.code, condensed=condensed,
            model=model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            model_seconds=model_seconds, check_seconds=check_seconds, created=time.time())
        try:
            self.history.record(record)
        except sqlite3.Error as error:  # a full disk or a locked file must not cost the user the result
            log.warning("pycapsule: could not record the attempt in %s: %s", self.history.path, error)

    def _conclude(self, attempt: int, verification: str) -> None:
        if self.history is None:
            return
        try:
            self.history.conclude(self.run_id, attempt, verified=verification)
        except sqlite3.Error as error:
            log.warning("pycapsule: could not record the result in %s: %s", self.history.path, error)


def _verified(what: str, weak: bool = False, strength: Strength | None = None) -> str:
    """`Outcome.verification` of a body that passed what ran ('verified by 3 examples + 12 tests (...); they
    catch 9 of 9 small changes')."""
    text = f"{'only weakly verified' if weak else 'verified'} by {what}"
    return f"{text}; {strength.describe()}" if strength is not None else text


def _noted(strength: Strength | None) -> str:
    """What a passed result's message adds of its strength ('; they catch 24 of 26 small changes; still
    passing: line 16: ...'): the changes that survive are worth a look even when they do not withhold
    "passed" (`min_caught`)."""
    if strength is None:
        return ""
    survivors = f"; still passing: {strength.survivors_text()}" if strength.survivors else ""
    return f"; {strength.describe()}{survivors}"


def _loose(strength: Strength) -> str:
    """Why a passing body is only loosely pinned, naming the first surviving changes."""
    return (f"they do not pin it down: {strength.describe()}; still passing: {strength.survivors_text()}")


def _not_verified(why: str) -> str:
    """`Outcome.verification` of a body nothing could check."""
    return f"not verified: {why}"
