"""What a self-debugging run reports as it goes (`pycapsule.loop.self_debug` yields them): attempts
starting and ending, streamed text, model retries, notices, and the outcome. Kept apart from the loop so
that what renders them (`pycapsule.event_text`, the CLI, the language server) depends on these types only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pycapsule.debugging.signature import TextEdit
from pycapsule.model_client import Usage
from pycapsule.model_progress import Progress

if TYPE_CHECKING:
    from pycapsule.strength.check import Strength

Mode = Literal["generate", "fix", "restart", "check"]
Status = Literal["passed", "passed_loosely", "not_verified", "gave_up", "cancelled", "error"]
"""passed_loosely: the examples and tests pass, but too few of the body's small changes fail them
(`Settings.min_caught`): the body is kept, and the outcome says what they do not pin down."""
Unavailable = Literal["model", "sandbox"]


@dataclass(frozen=True)
class AttemptStarted:
    attempt: int
    max_attempts: int
    mode: Mode


@dataclass(frozen=True)
class TokensStreamed:
    attempt: int
    text: str


@dataclass(frozen=True)
class ModelRetrying:
    """The model call failed and is tried again after `delay` s; text streamed so far is void."""

    attempt: int
    reason: str
    delay: float


@dataclass(frozen=True)
class ModelProgress:
    """Where the attempt's model request is: starting the model, waiting, reading the prompt, writing, with
    their figures (`model_progress.Progress`); sent when a phase starts and at least once a second."""

    attempt: int
    progress: Progress


@dataclass(frozen=True)
class Checking:
    """The sandbox runs the attempt's answer: its examples, then (when they pass) the project's tests."""

    attempt: int
    examples: int
    tests: int
    """The project's tests selected for the function (0: none)."""


@dataclass(frozen=True)
class Pinning:
    """A body passed: its small changes (mutants) run against the same examples and tests, to tell how
    tightly they pin it down (`pycapsule.strength`)."""

    attempt: int


@dataclass(frozen=True)
class Notice:
    """Something the user should see while waiting, e.g. the embedded model being installed."""

    message: str


@dataclass(frozen=True)
class AttemptFinished:
    attempt: int
    passed: bool
    headline: str
    """One line ('' when passed)."""
    condensed: str
    """What the fix prompt gets ('' when passed); a repeat's starts with a line saying what it repeated."""
    code: str
    """The function the model wrote (its raw answer when no code could be taken from it; for a repeat,
    the code of the attempt it repeats, which differs at most in what the splice leaves out)."""
    usage: Usage
    seconds: float
    verdict: str = ""
    """'passed', 'failed', 'not_verified', 'no_code', 'signature' or a sandbox status."""
    model_seconds: float = 0.0
    """Part of `seconds` spent waiting for the model (including retries)."""
    failed_examples: int | None = None
    """How many of the docstring's examples failed; None when they could not all run (no code, a module
    error, a timeout...)."""
    failure: str = ""
    """The failure as the user reads it ('' when passed): `condensed` without what was written for the
    model (e.g. how to format the answer)."""
    repeated: int | None = None
    """Set when the answer was code attempt `repeated` had already tried (0: the current body): it was not
    run again; verdict, headline, failure and failed examples are that attempt's."""


@dataclass(frozen=True)
class Closest:
    """When a run gives up: the try that came nearest (fewest examples failing, then fewest of the project's
    tests), kept so the user can see it and take it."""

    attempt: int
    code: str
    """The model's code for the function, as spliced into `new_source`."""
    new_source: str
    failing: str
    """What still fails, in one line (the attempt's headline)."""
    near: bool = False
    """One example, or one of the project's tests, short of passing."""
    edits: tuple[TextEdit, ...] = ()
    """`code` as edits of the module the run started from (what an editor applies)."""


@dataclass(frozen=True)
class Outcome:
    status: Status
    message: str
    """One line for the user."""
    new_source: str | None
    """The module with the new body; None unless status is passed or not_verified."""
    edits: tuple[TextEdit, ...]
    attempts: int
    """Model attempts made."""
    qualname: str = ""
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    unavailable: Unavailable | None = None
    """Set when the run ended because the model or the sandbox cannot be used: the targets after it would
    end the same way."""
    outside_target: bool = False
    """Set when the run ended, no model asked, because the module cannot be imported for a reason outside
    the target function: no body can change that."""
    verified_by: str = ""
    """What checked a passed body: '3 examples + 12 tests (tests/test_x.py)'."""
    run_id: str = ""
    """The run's id in the history (`AttemptRecord.run_id`); '' when no attempt was made."""
    result_attempt: int | None = None
    """The attempt whose body the outcome carries (0: the current body, checked first); None without one."""
    verification: str = ""
    """What the history says verified that body ('verified by 3 examples + 12 tests (...)', 'only weakly
    verified by ...', 'not verified: why'): `AttemptRecord.verified`."""
    closest: Closest | None = None
    """Set when the run gave up after trying bodies: the nearest of them (never applied by itself)."""
    strength: Strength | None = None
    """How many of the result's small changes its examples and tests catch (None: not measured)."""


@dataclass(frozen=True)
class Finished:
    outcome: Outcome


Event = (AttemptStarted | TokensStreamed | ModelRetrying | ModelProgress | Checking | Pinning | Notice
         | AttemptFinished | Finished)
