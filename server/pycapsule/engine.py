"""The engine: settings + a warm sandbox + the model (started on its first request) + history.

The CLI and the language server both hold one `Engine` and iterate `generate`. Everything heavy
starts lazily on first use and stays warm until `close()`. `generate` never raises for anything
the user, the model or the sandbox does: every failure ends the event stream with a `Finished`
whose outcome has status "error" and a one-line message.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from pycapsule.capsule import Capsule, capsule_by_qualname, read_capsules
from pycapsule.config import Settings, project_root
from pycapsule.doc_examples import doc_examples
from pycapsule.events import Event, Finished, Notice, Outcome, Status, Unavailable
from pycapsule.executor import doctest_job
from pycapsule.history import History
from pycapsule.interpreter import Interpreter, project_interpreter
from pycapsule.loop import first_request, import_problem, self_debug, unavailable_part
from pycapsule.model_client import ModelError, Programmer
from pycapsule.model_source import ModelSource
from pycapsule.project import module_import
from pycapsule.project_tests import TestSelection, select_tests
from pycapsule.sandbox.api import RunResult, Sandbox, SandboxUnavailable
from pycapsule.strength.check import Strength, assess
from pycapsule.strength.rivals import earlier_rivals
from pycapsule.tests_job import ProjectTests, TestsRun

log = logging.getLogger(__name__)


class Engine:
    """Thread-safe: the sandbox and programmer are shared; one loop per function is the caller's job."""

    def __init__(self, settings: Settings, *, project_root: Path | None = None,
                 history: History | None = None, sandbox: Sandbox | None = None,
                 interpreter: Interpreter | None = None) -> None:
        """`sandbox`, `history`: already open ones to use (the caller keeps them and closes them);
        `interpreter`: the Python the jobs run with (default: the project's, `project_interpreter`)."""
        self.settings = settings
        self.project_root = project_root
        self.interpreter = interpreter or project_interpreter(settings.python, None, project_root)
        self._lock = threading.RLock()
        self._sandbox: Sandbox | None = sandbox
        self._owns_sandbox = sandbox is None
        self._model = ModelSource(settings)
        """The model, started on the first request that needs it (model_source.py)."""
        self._history = history
        self._owns_history = history is None
        self._history_failed = False

    # ---- lazily started parts --------------------------------------------------------------------

    def sandbox(self) -> Sandbox:
        """The warm sandbox; raises SandboxUnavailable with the reason."""
        with self._lock:
            if self._sandbox is None:
                from pycapsule.sandbox.select import open_sandbox

                self._sandbox = open_sandbox(self.settings.sandbox, self.project_root, self.interpreter.path)
            return self._sandbox

    def history(self) -> History | None:
        """None when the history database cannot be opened (then nothing is recorded; said once)."""
        with self._lock:
            if self._history is None and not self._history_failed:
                try:
                    self._history = History()
                except (OSError, sqlite3.Error) as error:
                    self._history_failed = True
                    log.warning("pycapsule: attempts are not recorded: cannot open the history: %s", error)
            return self._history

    def programmer(self) -> Programmer:
        """The model's programmer, started now if it is not yet (bench: once, before its workers race)."""
        return self._model.programmer()

    @property
    def model_threads(self) -> int | None:
        """The embedded model's CPU threads while it runs; None for an endpoint or before it starts."""
        return self._model.threads

    # ---- the two jobs ----------------------------------------------------------------------------

    def generate(self, capsule: Capsule, cancel: threading.Event | None = None,
                 from_current_body: bool = False) -> Iterator[Event]:
        """The loop's events for `capsule`, ending with exactly one `Finished`."""
        cancel = cancel or threading.Event()
        try:
            sandbox = self.sandbox()
            problem, checked = import_problem(capsule, sandbox, self.settings, cancel)
            if problem:  # else the loop shows the sandbox's warnings with its first attempt
                for warning in checked.warnings:
                    yield Notice(warning)
                missing = missing_package(checked, self.interpreter)
                yield _finished(capsule, "error", f"{problem}{missing}", outside_target=True)
                return
            if cancel.is_set():  # before any model starts: a Ctrl-C may have killed the embedded one
                yield _finished(capsule, "cancelled", "cancelled before the model was asked")
                return
            tests, notices = project_tests(capsule, sandbox, self.settings, self.interpreter, cancel)
            for notice in notices:
                yield Notice(notice)
            yield from self_debug(
                capsule,
                programmer=self._model,
                sandbox=sandbox,
                settings=self.settings,
                start_body=_current_body(capsule) if from_current_body else None,
                cancel=cancel,
                context=_context(capsule, self.settings.context_chars),
                history=self.history(),
                tests=tests,
            )
        except (SandboxUnavailable, ModelError) as error:
            yield _error(capsule, f"{error}", unavailable_part(error))
        except Exception as error:  # a bug of ours must still not cost the editor its server
            log.exception("pycapsule: internal error while generating %s", capsule.qualname)
            yield _error(capsule, f"internal error ({type(error).__name__}: {error}); please report it")

    def read_ahead(self, capsule: Capsule, cancel: threading.Event | None = None) -> int:
        """Reads the stub's first request into the embedded model's cache, when the model runs already, so
        that a run started soon after writes sooner with the same answer. Returns the tokens read ahead."""
        if not self._model.started:
            return 0
        context = _context(capsule, self.settings.context_chars)
        messages = first_request(capsule, programmer=self._model, settings=self.settings, context=context,
                                 history=self.history())
        return self._model.read_ahead(messages, cancel)

    def check(self, source: str, path: Path | None, targets: tuple[str, ...] | None,
              timeout: float | None = None, cancel: threading.Event | None = None) -> RunResult:
        """Run the doctests of `targets` (None: all) in `source`; raises SandboxUnavailable. A job still
        running when `cancel` is set is killed (status "cancelled")."""
        job = doctest_job(source, path, targets, timeout or self.settings.job_timeout)
        return self.sandbox().run(job, cancel)

    def tests_for(self, source: str, path: Path, qualname: str | None) -> ProjectTests | None:
        """The project's tests of `qualname` (None: of every function) in the module `source` at `path`:
        found, not run; None when there are none."""
        capsules = [capsule_by_qualname(source, qualname, path)] if qualname else read_capsules(source, path)
        return find_tests(capsules, path, self.settings, self.interpreter)

    def run_tests(self, tests: ProjectTests, source: str, cancel: threading.Event | None = None) -> TestsRun:
        """`tests` run against `source` in the sandbox; raises SandboxUnavailable."""
        return tests.run(self.sandbox(), source, cancel)[0]

    def strength(self, capsule: Capsule, source: str, tests: ProjectTests | None = None,
                 cancel: threading.Event | None = None) -> Strength | None:
        """How tightly the examples (and `tests`, which passed on `source`) pin the passing body of `capsule`
        down (`pycapsule.strength`); None when the check is off or nothing checks it."""
        root = project_root(capsule.path)
        documented = doc_examples(capsule.path, capsule.qualname, root, capsule.module_source)
        examples = capsule.verified_by_doctests or bool(documented)
        rivals = earlier_rivals(self.history(), capsule, source)
        return assess(self.sandbox(), capsule, source, self.settings, examples=examples, tests=tests,
                      root=root, cancel=cancel, rivals=rivals)

    def close(self) -> None:
        with self._lock:
            sandbox = self._sandbox if self._owns_sandbox else None
            history = self._history if self._owns_history else None
            for part in (self._model, sandbox, history):
                if part is not None:
                    try:
                        part.close()
                    except Exception as error:  # closing must go on for the other parts
                        log.warning("pycapsule: closing %s failed: %s", type(part).__name__, error)
            self._sandbox = self._history = None

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def project_tests(capsule: Capsule, sandbox: Sandbox, settings: Settings, interpreter: Interpreter,
                  cancel: threading.Event | None = None) -> tuple[ProjectTests | None, list[str]]:
    """The project's tests of `capsule`, run once on the file as it stands: a test that fails there already
    (any test, for a function with a body; one that fails before it reaches the function, for a stub) is
    left out and reported, not charged to the model. None when there are none to run; the notices say why."""
    if not settings.project_tests or capsule.path is None:
        return None, []
    tests = find_tests([capsule], capsule.path, settings, interpreter)
    if tests is None:
        return None, []
    baseline, _ = tests.run(sandbox, capsule.module_source, cancel)
    if baseline.problem is not None:
        return None, [f"{capsule.qualname}: {baseline.problem}; only its examples check it"]
    failing = baseline.failing(("collect",) if capsule.is_stub else ("setup", "call", "teardown", "collect"))
    kept = tests.selection.without(failing)
    left_out = ", ".join(sorted(failing))
    notices = [f"{capsule.qualname}: already failing, so left out: {left_out}"] if failing else []
    if not kept.node_ids:
        return None, notices
    return replace(tests, selection=kept, already_failing=tuple(sorted(failing))), notices


def find_tests(capsules: list[Capsule], path: Path, settings: Settings, interpreter: Interpreter
               ) -> ProjectTests | None:
    """The project's tests that exercise any of `capsules` (functions of the module at `path`): found by
    reading files, nothing run; None when there are none."""
    root = project_root(path)
    if root is None:
        return None
    found = module_import(path, root)
    node_ids = dict.fromkeys(node for capsule in capsules
                             for node in select_tests(capsule, found.name, found.root).node_ids)
    if not node_ids:
        return None
    return ProjectTests(found, TestSelection(tuple(node_ids)), interpreter.describe(), settings.test_timeout)


def missing_package(result: RunResult, interpreter: Interpreter) -> str:
    """When the module cannot be imported for a package not installed where it runs, the end of the
    sentence saying so: which interpreter lacks it and what to do ('' otherwise)."""
    error = result.module_error
    found = re.match(r"No module named '([^']+)'", error.message) if error is not None else None
    if found is None:
        return ""
    return (f"; {found.group(1)} is not installed for {interpreter.describe()}: install it there, or name "
            "the project's interpreter with --python (or the `python` setting)")


def _current_body(capsule: Capsule) -> str:
    """The body region exactly as it stands (not `capsule.body`, which re-lays out a one-line body)."""
    return capsule.module_source[capsule.body_start: capsule.body_end]


def _context(capsule: Capsule, budget_chars: int) -> str:
    from pycapsule.context import module_context

    return module_context(capsule, budget_chars)


def _error(capsule: Capsule, message: str, unavailable: Unavailable | None = None) -> Finished:
    return _finished(capsule, "error", message, unavailable)


def _finished(capsule: Capsule, status: Status, message: str,
              unavailable: Unavailable | None = None, outside_target: bool = False) -> Finished:
    """The end of a run in which no model was asked."""
    return Finished(Outcome(status, " ".join(message.split()), None, (), 0, capsule.qualname,
                            unavailable=unavailable, outside_target=outside_target))
