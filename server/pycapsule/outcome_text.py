"""The words of a self-debugging run's outcome (`pycapsule.loop`): its one-line message for the user and
what its history row says verified the result (`Outcome.verification`)."""

from __future__ import annotations

from dataclasses import dataclass

from pycapsule.capsule import Capsule, CapsuleError, capsule_by_qualname
from pycapsule.debugging.change_size import change_size
from pycapsule.events import Status
from pycapsule.strength.check import Strength


@dataclass(frozen=True)
class Told:
    """How a run ends, in words."""

    status: Status
    message: str
    verification: str = ""
    """'verified by ...', 'only weakly verified by ...', 'not verified: why' ('' without a result)."""
    verified_by: str = ""
    """What checked a passed body: '3 examples + 12 tests (tests/test_x.py)'."""
    strength: Strength | None = None


def passed(name: str, what: str, weak: bool, strength: Strength | None, loose: bool, attempts: int,
           size: str) -> Told:
    """A body that passed `what` ran ('3 examples'): loosely when its small changes pass as well (`loose`);
    weakly when those runs ran less than half of its lines and its strength was not measured."""
    passed = f"{name}: {what} pass after {attempts} attempt(s)"
    verification = verified(what, weak and strength is None, strength)
    if strength is not None and loose:
        return Told("passed_loosely", f"{passed}, but {_loose(strength)}{size}", f"loosely {verification}",
                    what, strength)
    if strength is not None:
        notes = _noted(strength)
    else:
        notes = ", but they ran less than half of its lines: only weakly verified" if weak else ""
    return Told("passed", f"{passed}{notes}{size}", verification, what, strength)


def passed_as_written(name: str, what: str, failure: str) -> Told:
    """A body whose examples pass as written but not with iterators (`failure`)."""
    but = f"but it {failure}"
    return Told("passed", f"{name}: {what} pass, {but}", f"{verified(what)}, {but}", what)


def not_verified(name: str, why: str) -> Told:
    """A body that runs but that nothing could check."""
    return Told("not_verified", f"{name}: body generated but NOT verified: {why}", f"not verified: {why}")


def already_passes(name: str, what: str, strength: Strength | None, loose: bool) -> Told:
    """The function's current body, checked first, passes: nothing changes."""
    if strength is not None and loose:
        return Told("passed_loosely", f"{name}: {what} already pass, but {_loose(strength)}; nothing changed",
                    f"loosely {verified(what, strength=strength)}", what, strength)
    return Told("passed", f"{name}: {what} already pass{_noted(strength)}; nothing to change",
                verified(what, strength=strength), what, strength)


def already_runs(name: str, why: str) -> Told:
    """The function's current body, checked first, runs, but nothing checks it: nothing changes."""
    return Told("not_verified", f"{name}: the module runs but {why}; nothing to change",
                f"not verified: {why}")


def gave_up(name: str, attempts: int, failing: str | None) -> Told:
    """No attempt passed; `failing`: the last one's headline (None: no attempt was made)."""
    return Told("gave_up", f"{name}: still failing after {attempts} attempt(s): "
                           f"{failing if failing is not None else 'no attempt was made'}")


def cancelled(attempts: int) -> Told:
    return Told("cancelled", f"cancelled after {attempts} model attempt(s)")


def unverified(capsule: Capsule) -> str:
    """Why nothing checks the function (capsule.verified_by_doctests is False)."""
    if capsule.doctest_error:
        return f"its docstring's examples cannot be run ({capsule.doctest_error})"
    if not capsule.examples:
        return "its docstring has no examples"
    return "no example in its docstring checks it (each is skipped or only sets up)"


def changed(capsule: Capsule, original_body: str, new_source: str) -> str:
    """For a repair: how much of the body it changed ('; it changed 1 of 9 body lines')."""
    try:
        body = capsule_by_qualname(new_source, capsule.qualname, capsule.path).body
    except CapsuleError:
        return ""
    return f"; it {change_size(original_body, body).describe()}"


def verified(what: str, weak: bool = False, strength: Strength | None = None) -> str:
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
    return f"they do not pin it down: {strength.describe()}; still passing: {strength.survivors_text()}"
