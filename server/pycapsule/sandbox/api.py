"""The sandbox contract: what a job is, what comes back, and what every backend offers.

A job is one Python module (its source text) run in a fresh process inside the sandbox, after
which the doctests of the named functions run against that module. Everything here is plain
data so the CLI, the language server, the loop and the benchmark share one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

# How a job ended, as judged host-side.
#   ok        the module ran and every doctest was executed (some may still have failed)
#   error     the module's own top-level code raised (see RunResult.module_error)
#   timeout   the wall-clock limit was hit; the job was killed
#   memory    the job ran out of memory (MemoryError or killed by the memory limit)
#   killed    the job died by a signal or os._exit before reporting (segfault, SIGKILL, ...)
#   crashed   the sandbox itself failed (the worker could not be started or answered garbage)
Status = Literal["ok", "error", "timeout", "memory", "killed", "crashed"]


@dataclass(frozen=True)
class Job:
    source: str
    """The whole module text to run."""
    filename: str = "capsule.py"
    """The name the module's code objects carry (shown in tracebacks). Only its basename is used inside."""
    module_name: str = "__main__"
    doctest_targets: tuple[str, ...] | None = None
    """Qualnames whose doctests to run; None = every function/class in the module; () = none."""
    timeout: float = 10.0
    """Wall-clock seconds for the whole job, enforced host-side."""
    output_limit: int = 64 * 1024
    """Bytes of stdout/stderr kept; the rest is dropped and `output_truncated` is set."""
    project_root: Path | None = None
    """A directory made readable (read-only) and put on sys.path, so doctests can import the user's
    modules."""


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


@dataclass(frozen=True)
class FunctionReport:
    qualname: str
    attempted: int
    failed: int
    failures: tuple[ExampleFailure, ...] = ()
    parse_error: str | None = None
    """Set when the docstring could not be parsed as doctests (e.g. inconsistent indentation)."""


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

    def run(self, job: Job) -> RunResult: ...

    def close(self) -> None: ...
