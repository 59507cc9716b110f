"""What the language server and the engine's process (`engine_host`) send each other besides ids: a run's
start and the host's answer to it, and a doctest check's request, plan and outcome. Plain data, pickled
over the socket between the two (`engine_process`).

A run: the server sends ("start", id, StartRequest); the host answers ("resolved", id, Capsule | Refusal)
(a refusal is followed by ("done", id)); the server lets it ("go", id) or ("drop", id), a "go" possibly sent
before the answer (the server found the target in its own outline, and the run is under way for the
editor); the host sends ("event", id, event) for each of the engine's events, then ("done", id), or
("failed", id, text).

A doctest check: the server sends ("check", id, CheckRequest); the host parses the module and answers
("planned", id, CheckPlan); the server, which caches findings by content key, lets the functions it has no
findings for run, ("go", id, qualnames), or ("drop", id) when it has them all; the host runs them in the
root's sandbox and sends ("checked", id, CheckOutcome), then ("done", id), or ("failed", id, text).

Either: ("cancel", id) stops it (a sandbox job of it is killed); ("close",) ends the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pycapsule.capsule import CapsuleError
from pycapsule.config import Settings
from pycapsule.lsp import wording
from pycapsule.lsp.doctest_findings import Finding
from pycapsule.lsp.documents import CapsuleOutline

Mode = Literal["generate", "fix", "read_ahead"]
"""A run's kind; "read_ahead" reads a stub's first request into the model's cache (lsp/read_ahead.py)."""


@dataclass(frozen=True)
class StartRequest:
    """What the host needs to start a run: the document as the command saw it and the target in it."""

    uri: str
    path: Path | None
    text: str
    qualname: str | None
    """The target by name (None: by `line`)."""
    line: int | None
    """0-based line inside the target function (None: by `qualname`); with `qualname` too, the function there
    must have that name (the server found it so in its outline)."""
    mode: Mode
    settings: Settings
    project_anchor: Path | None
    """Where the project's root is looked up from (`Configuration.project_anchor`): the host walks up,
    so the server's request path touches no file system."""


@dataclass(frozen=True)
class Refusal:
    """No run: `kind` "syntax" (the file does not parse) or "target" (no such function; it has a body)."""

    kind: Literal["syntax", "target"]
    reason: str
    """Why, as the end of a sentence: "the file does not parse (...); fix that first"."""

    @property
    def message(self) -> str:
        """One sentence, when it is the start command's answer."""
        return wording.refused(self.kind, self.reason)


def has_a_body(name: str) -> Refusal:
    """`generate` on a function that is no stub; the server's outline or the engine's process finds it."""
    return Refusal("target", wording.has_a_body(name))


@dataclass(frozen=True)
class CheckRequest:
    """A doctest check of the document's text as it was saved."""

    uri: str
    path: Path | None
    text: str
    settings: Settings
    project_anchor: Path | None
    """As `StartRequest.project_anchor`."""


@dataclass(frozen=True)
class PlannedFunction:
    """A function whose doctests count (its docstring's, or the project's documentation's examples of it)."""

    qualname: str
    def_line: int
    """1-based, the first decorator's line (`Capsule.def_line`)."""
    end_line: int
    key: str
    """Its content key (`doctest_keys`): its findings can only change when the key does."""
    doctest_error: str | None
    """Why its docstring's doctests cannot be read; then nothing of it runs."""


@dataclass(frozen=True)
class CheckPlan:
    """The module as the host parsed it: its outline, its syntax error, and the functions to check (none when
    it does not parse or has no doctests)."""

    outline: tuple[CapsuleOutline, ...]
    syntax_error: CapsuleError | None
    functions: tuple[PlannedFunction, ...]


@dataclass(frozen=True)
class Problem:
    """A diagnostic of no example: the module raised (`qualname` None), or a function's doctests did not
    finish."""

    line0: int
    message: str
    qualname: str | None


@dataclass(frozen=True)
class CheckOutcome:
    findings: dict[str, tuple[Finding, ...]]
    """By qualname, for each function whose doctests ran to their end."""
    problems: tuple[Problem, ...]
