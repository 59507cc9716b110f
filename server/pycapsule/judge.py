"""The judge of a self-debugging run (`pycapsule.loop`): what a candidate module comes to in the sandbox.

A body is judged by its examples (the docstring's, then the project's documentation's: `doc_examples`),
a model's answer also with the examples' iterator version (`debugging.iterator_examples`). With the
project's tests (`tests_job.ProjectTests`), a body whose examples pass (or that has none) passes only when
those tests pass too; their failure is the attempt's, condensed like a doctest failure. A body that passes
has its examples run once more in a sandbox started for that run alone, so nothing an earlier job left in
the warm one can have made it pass. How tightly the examples and tests pin a passing body down is the
mutation check's (`strength.check.assess`).

Code this run already judged (the same module once spliced, layout and comments aside:
`debugging.same_code`) is not run again when that code's verdict was its own (`REPEATABLE`): the result
is the earlier one, with `AttemptResult.repeated` naming the attempt that got it.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace

from pycapsule.capsule import Capsule
from pycapsule.config import Settings, project_root
from pycapsule.debugging.iterator_examples import iterator_examples
from pycapsule.debugging.same_code import code_key
from pycapsule.debugging.signature import TextEdit
from pycapsule.doc_examples import describe, doc_examples
from pycapsule.events import Checking, Pinning
from pycapsule.executor import Verdict, execute, job_for, judge
from pycapsule.model_client import Cancelled
from pycapsule.sandbox.api import Sandbox
from pycapsule.strength.check import Strength, assess, compared, measured
from pycapsule.strength.rivals import Rival
from pycapsule.tests_job import ProjectTests, TestsRun, counted, coverage, tests_condensed, tests_headline

REPEATABLE = ("failed", "timeout", "memory")
"""Verdicts the same code gets again: the code's own. A job that was killed or crashed the sandbox may
have met a worker that died of something else, so its code is run again when it comes back."""


@dataclass
class AttemptResult:
    """What one attempt's body came to: the judge's result, or why the answer had no body to judge."""

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


class Judge:
    """Runs one function's candidate modules in the sandbox and says what each comes to."""

    def __init__(self, capsule: Capsule, sandbox: Sandbox, settings: Settings, cancel: threading.Event,
                 tests: ProjectTests | None = None) -> None:
        self.capsule, self.sandbox, self.settings, self.cancel, self.tests = (
            capsule, sandbox, settings, cancel, tests)
        self.root = project_root(capsule.path)
        self.docs = doc_examples(capsule.path, capsule.qualname, self.root, capsule.module_source)
        """Its examples in the project's documentation: they run with the docstring's (job_for)."""
        self.verified = capsule.verified_by_doctests or (bool(self.docs) and capsule.doctest_error is None)
        """Some example checks the function (else only the module's import and the project's tests do)."""
        self.iterators = iterator_examples(capsule) if settings.iterator_examples and self.verified else None
        self.tried: dict[str, tuple[int, AttemptResult]] = {}
        """Code judged before that would get the same verdict again, by `code_key`: the attempt that ran it
        (-1: an earlier run) and its result."""
        self.warnings: list[str] = []
        """The sandbox's warnings (e.g. an unreadable project folder), each once."""
        self._warned = 0

    def result_of(self, attempt: int, code: str, source: str, edits: tuple[TextEdit, ...]) -> AttemptResult:
        """The verdict on `source`; for code this run has already run, that attempt's result again."""
        key = code_key(source)
        if key in self.tried:
            earlier, result = self.tried[key]
            return replace(result, repeated=earlier)
        result = self._judged(code, source, edits, with_iterators=attempt > 0)
        if result.verdict in REPEATABLE:
            self.tried[key] = (attempt, result)
        return result

    def remember(self, earlier: AttemptResult) -> None:
        """A body an earlier run tried and saw fail: an answer repeating it is not run again as new."""
        assert earlier.new_source is not None
        self.tried.setdefault(code_key(earlier.new_source), (-1, earlier))

    def unsaid_warnings(self) -> list[str]:
        """The sandbox's warnings not yet returned by this method."""
        new = self.warnings[self._warned:]
        self._warned = len(self.warnings)
        return new

    def _judged(self, code: str, source: str, edits: tuple[TextEdit, ...],
                with_iterators: bool) -> AttemptResult:
        """The verdict on `source`; a model's answer (`with_iterators`) is also run with iterators. A body
        that passes has its examples run once more in a fresh sandbox."""
        attempt = self._judged_warm(code, source, edits, with_iterators)
        if attempt.verdict != "passed" or not self.verified:
            return attempt
        job = replace(job_for(self.capsule, source, self.settings.job_timeout, self.root), fresh=True)
        again = judge(self.capsule, self.sandbox.run(job, self.cancel))
        self._stop_if_cancelled()
        if again.passed:
            return attempt
        why = f"its examples passed in the warm sandbox but not in a fresh one: {again.headline}"
        return AttemptResult(code, again.label, why, again.condensed, source, edits)

    def _judged_warm(self, code: str, source: str, edits: tuple[TextEdit, ...],
                     with_iterators: bool) -> AttemptResult:
        if self.verified:
            verdict = execute(self.sandbox, self.capsule, source, self.settings.job_timeout, self.root,
                              self.cancel, self.iterators if with_iterators else None, trace_lines=True)
            label = verdict.label
        else:
            verdict = self._run_module(source)
            label = "not_verified" if verdict.passed else verdict.label
        self._stop_if_cancelled()
        self.warnings.extend(w for w in verdict.result.warnings if w not in self.warnings)
        failed = sum(f.failed for f in verdict.result.functions) if verdict.result.status == "ok" else None
        attempt = AttemptResult(code, label, verdict.headline, verdict.condensed, source, edits, failed,
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

    def _run_tests(self, code: str, source: str, edits: tuple[TextEdit, ...]) -> AttemptResult:
        """The examples passed (or there are none): the project's tests decide."""
        assert self.tests is not None
        run, result = self.tests.run(self.sandbox, source, self.cancel)
        self._stop_if_cancelled()
        if run.ok:
            return AttemptResult(code, "passed", "", "", source, edits, 0, tests=run)
        verdict = "timeout" if result.status == "timeout" else "failed"
        return AttemptResult(code, verdict, tests_headline(run), tests_condensed(run), source, edits,
                             tests=run)

    def _run_module(self, source: str) -> Verdict:
        """No doctests to run: at least the module must still import."""
        job = replace(job_for(self.capsule, source, self.settings.job_timeout, self.root), doctest_targets=(),
                      documents=())
        return judge(self.capsule, self.sandbox.run(job, self.cancel))

    def _stop_if_cancelled(self) -> None:
        if self.cancel.is_set():
            raise Cancelled()

    def strength(self, result: AttemptResult, attempt: int, rivals: Sequence[Rival] = ()
                 ) -> Generator[Pinning, None, Strength | None]:
        """How many small changes of the passing body `result` its examples and tests catch, with examples
        that would catch the survivors, and where `rivals` (other bodies of the function) that pass too show
        something else; None when the check is off or nothing checks the body."""
        tests = self.tests if result.tests is not None and result.tests.ok else None
        if result.new_source is None or not measured(self.settings, self.verified, tests):
            return None
        yield Pinning(attempt)
        ran = result.example_lines | (result.tests.lines_run if result.tests is not None else frozenset())
        strength = assess(self.sandbox, self.capsule, result.new_source, self.settings,
                          examples=self.verified, tests=tests, root=self.root, lines_run=ran,
                          body_seconds=result.example_seconds, cancel=self.cancel, rivals=rivals)
        self._stop_if_cancelled()
        return strength

    def compared(self, strength: Strength, result: AttemptResult, rivals: Sequence[Rival]) -> Strength:
        """`strength` of the passing body `result` with where `rivals` that pass as well disagree with it."""
        if result.new_source is None:
            return strength
        tests = self.tests if result.tests is not None and result.tests.ok else None
        found = compared(strength, self.sandbox, self.capsule, result.new_source, self.settings, rivals,
                         examples=self.verified, tests=tests, root=self.root, cancel=self.cancel)
        self._stop_if_cancelled()
        return found

    def loose(self, strength: Strength | None) -> bool:
        """Too few of a passing body's small changes fail its examples and tests (`Settings.min_caught`)."""
        return strength is not None and not strength.pinned(self.settings.min_caught,
                                                            self.settings.strict_signatures)

    def what_ran(self, result: AttemptResult) -> tuple[str, bool]:
        """What checked a passing body ('3 examples + 12 tests (tests/test_x.py; 7 of 9 body lines run)',
        the lines counted over the examples and the tests together), and whether those runs ran less than
        half of its lines: weakly verified ('2 examples (1 of 6 body lines run)')."""
        examples, what = self.examples() if self.verified else (0, "")
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

    def examples(self) -> tuple[int, str]:
        """How many examples run (the docstring's, then the documentation's) and what they are ('1 example +
        2 documentation examples (README.md:12)')."""
        own = sum(not e.skipped for e in self.capsule.examples) if self.capsule.verified_by_doctests else 0
        parts = [counted(own, "example")] if own else []
        if self.docs:
            parts.append(describe(self.docs))
        return own + sum(doc.examples for doc in self.docs), " + ".join(parts)

    def checking(self, attempt: int) -> Checking:
        """What the sandbox is about to run for an answer."""
        examples = self.examples()[0] if self.verified else 0
        tests = len(self.tests.selection.node_ids) if self.tests is not None else 0
        return Checking(attempt, examples, tests)
