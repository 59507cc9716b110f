"""The sandbox contract: what a job is, what comes back, and what every backend offers.

A job is one Python module (its source text) run in a fresh process inside the sandbox, after
which the doctests of the named functions run against that module. Everything here is plain
data so the CLI, the language server, the loop and the benchmark share one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from threading import Event
from typing import Literal, Protocol

# How a job ended, as judged host-side.
#   ok        the module ran and every doctest was executed (some may still have failed)
#   error     the module's own top-level code raised (see RunResult.module_error)
#   timeout   the wall-clock limit was hit; the job was killed
#   memory    the job ran out of memory (MemoryError or killed by the memory limit)
#   killed    the job died by a signal or os._exit before reporting (segfault, SIGKILL, ...)
#   crashed   the sandbox itself failed (the worker could not be started or answered garbage)
#   cancelled the caller cancelled the job before it ended; it was killed
Status = Literal["ok", "error", "timeout", "memory", "killed", "crashed", "cancelled"]
MissingKind = Literal["network", "file", "read-only", "denied"]


MODULE_DOCSTRING = "<module>"
"""The qualname under which the module's own docstring is reported."""


@dataclass(frozen=True)
class DoctestItem:
    """One docstring to run as a doctest, as the host found it in the job's source."""

    qualname: str
    """'f', 'C.m', 'outer.inner', or MODULE_DOCSTRING."""
    docstring: str
    """The docstring's value (uncleaned, as `__doc__` holds it)."""
    line: int
    """1-based line of the docstring literal's first line in the job's source."""
    lookup: bool = False
    """Run it only when `qualname` names an attribute of the module at run time (how doctest and pytest
    find docstrings in a whole module: a function defined inside another, or in a branch not taken, is
    not run)."""
    error: str | None = None
    """Why it cannot run (e.g. no such function): reported as the item's parse error."""
    document: str | None = None
    """A documentation file's examples (its path from the project root, 'README.md'), not a docstring:
    `docstring` is the whole file's text and `line` 1. They run as pytest's `--doctest-glob` runs a text
    file, in a namespace of their own (`__name__` '__main__' and the conftests' `doctest_namespace`), not
    the module's globals; their report is added to `qualname`'s."""
    judged: tuple[int, ...] = ()
    """A document's examples that count, by the line of their '>>>': the earlier ones run unjudged (they
    set up the namespace), none after the last runs (`pycapsule.doc_examples`)."""


@dataclass(frozen=True)
class Job:
    source: str
    """The whole module text to run."""
    filename: str = "capsule.py"
    """The name the module's code objects carry (shown in tracebacks). Only its basename is used inside."""
    module_name: str = "__main__"
    """Dotted names ('pkg.sub.mod') are imported as the project would: parent packages first."""
    doctest_targets: tuple[str, ...] | None = None
    """Qualnames whose doctests to run; None = every function/class in the module; () = none.
    Ignored when `doctests` is given."""
    doctests: tuple[DoctestItem, ...] | None = None
    """The docstrings to run, found by the host (None: found from `doctest_targets`)."""
    optionflags: tuple[str, ...] = ()
    """Doctest option flag names for every example (pytest's `doctest_optionflags`)."""
    module_path: Path | None = None
    """The module's real file, inside `project_root`: its `__file__`, and what tracebacks name. None: a
    scratch file in the sandbox's work folder."""
    import_paths: tuple[Path, ...] = ()
    """Folders inside `project_root` put first on sys.path (the project's source roots)."""
    conftests: tuple[Path, ...] = ()
    """conftest.py files inside `project_root`, loaded in the sandbox before the module as pytest does: their
    autouse fixtures taking only `doctest_namespace` add names to every doctest."""
    timeout: float = 10.0
    """Wall-clock seconds for the whole job, enforced host-side."""
    output_limit: int = 64 * 1024
    """Bytes of stdout/stderr kept; the rest is dropped and `output_truncated` is set."""
    project_root: Path | None = None
    """A directory made readable (read-only) and put on sys.path, so doctests can import the user's
    modules."""
    trace_lines: bool = False
    """Note which lines of the module the examples run (`RunResult.lines_run`): what share of a body they
    exercise."""
    fresh: bool = False
    """Run in a sandbox started for this job alone and removed after it, not in the warm one: nothing an
    earlier job did can reach it (a result is re-checked so before it is written)."""
    documents: tuple[DoctestItem, ...] = ()
    """Documentation examples of the targets (`DoctestItem.document`), run after the docstrings found from
    `doctest_targets` (or the whole module); ignored when `doctests` names exactly what runs."""


@dataclass(frozen=True)
class MissingResource:
    """What an exception, or one it was raised from, says is not there."""

    kind: MissingKind
    """'network': a host name that does not resolve or a network that cannot be reached; 'file': a path
    that does not exist; 'read-only': a path on a read-only file system, written to; 'denied': a path the
    sandbox's user may not open."""
    detail: str
    """That exception's message, e.g. "[Errno 2] No such file or directory: 'data.csv'"."""


@dataclass(frozen=True)
class ExceptionInfo:
    type: str
    """e.g. 'ZeroDivisionError'."""
    message: str
    line: int | None
    """1-based line in the job's source of the innermost user-code frame (None when not in user code)."""
    source_line: str | None
    """That line's text, stripped."""
    traceback: str = ""
    """The user-code frames only, formatted; library frames dropped."""
    origin: str | None = None
    """'pkg/core.py:12': the innermost frame inside the project, relative to its root (None: none there)."""
    missing: MissingResource | None = None
    """Set when the exception ran into a missing network or file (whose lack it is, the host decides)."""


@dataclass(frozen=True)
class ExampleFailure:
    qualname: str
    """The function the doctest belongs to."""
    source: str
    """The example's source, e.g. 'add(1, 2)'."""
    line: int
    """1-based line of the example's '>>>' in the job's source."""
    expected: str
    got: str
    """What the example printed (empty when it raised)."""
    exception: ExceptionInfo | None = None
    """Set when the example raised an exception that was not expected."""
    note: str | None = None
    """Why an example counts as failed whatever it printed (the body changed the display hook)."""
    document: str | None = None
    """The documentation file the example is in ('README.md'; `line` is then its line there); None: the
    docstring's."""


@dataclass(frozen=True)
class FunctionReport:
    qualname: str
    attempted: int
    failed: int
    failures: tuple[ExampleFailure, ...] = ()
    parse_error: str | None = None
    """Set when the docstring could not be parsed as doctests (e.g. inconsistent indentation)."""
    skipped: int = 0
    """Examples not run because of a SKIP option (they verify nothing)."""
    documents: tuple[str, ...] = ()
    """The documentation files whose examples of this function ran too (`DoctestItem.document`)."""
    documented: int = 0
    """How many of `attempted` were those files' examples."""


@dataclass(frozen=True)
class RunResult:
    status: Status
    functions: tuple[FunctionReport, ...] = ()
    module_error: ExceptionInfo | None = None
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    duration: float = 0.0
    """Host-side wall-clock seconds for the job."""
    detail: str = ""
    """One sentence for the non-ok statuses, e.g. 'killed after 10.0 s wall-clock limit'."""
    warnings: tuple[str, ...] = field(default=())
    lines_run: tuple[int, ...] = ()
    """Lines of the module the examples ran, when the job asked (`Job.trace_lines`)."""

    @property
    def passed(self) -> bool:
        """True when the module ran and every doctest attempted passed (no doctests counts as passed)."""
        return (
            self.status == "ok"
            and all(f.failed == 0 and f.parse_error is None for f in self.functions)
        )


class SandboxUnavailable(RuntimeError):
    """The backend cannot run on this machine; the message says why and what to install."""


class Sandbox(Protocol):
    """A warm sandbox: started once, runs many jobs, each in a fresh forked process."""

    name: str

    def run(self, job: Job, cancel: Event | None = None) -> RunResult:
        """Never raises; a job still running when `cancel` is set is killed and ends "cancelled"."""
        ...

    def close(self) -> None: ...
