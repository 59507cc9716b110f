"""Other bodies that also pass, and the inputs on which they and the written body disagree.

When two bodies both pass a function's examples and tests, those cannot say which one is right where they
differ: the choice of one is not the spec's. The other bodies come from earlier runs of the same function
(the history keeps the bodies it called passed). Each one is run against the examples and the project's
tests the written body passed, as the body was; one that still passes is run on the same calls the
suggested examples come from (the examples' neighbours and the inputs the annotations admit), and every
call on which the two show different things is reported with both values, for the user to decide.
"""

from __future__ import annotations

import datetime
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import Capsule, CapsuleError
from pycapsule.debugging import UnusableReply
from pycapsule.debugging.same_code import code_key
from pycapsule.debugging.signature import splice
from pycapsule.executor import job_for
from pycapsule.history import AttemptRecord, History
from pycapsule.sandbox.api import Sandbox
from pycapsule.strength.examples import PROBE_LIMIT, probe_calls, stable_outputs
from pycapsule.strength.probes import signature_calls
from pycapsule.tests_job import ProjectTests

log = logging.getLogger(__name__)

RIVALS = 2
"""Other passing bodies compared at most (the newest)."""
SHOWN = 3
"""Disagreements reported at most, over all of them."""
RECORDS_READ = 40
"""The function's newest history rows read for them."""


@dataclass(frozen=True)
class Rival:
    """Another body of the function: the module with it, and what to call it ('the body a run passed on
    2026-12-06 14:03')."""

    source: str
    label: str


@dataclass(frozen=True)
class Disagreement:
    call: str
    """'late_fee(25)'."""
    output: str
    """What the written body shows for it, as a doctest expects it ('' for nothing)."""
    other_output: str
    other: str
    """The other body's label."""

    def text(self) -> str:
        """'`late_fee(25)` is 12.5 with this body, 10.0 with the body a run passed on 2026-12-06 14:03'."""
        return (f"`{self.call}` is {_shown(self.output)} with this body, "
                f"{_shown(self.other_output)} with {self.other}")

    def as_json(self) -> dict[str, str]:
        return {"call": self.call, "output": self.output, "other_output": self.other_output,
                "other": self.other}


def earlier_rivals(history: History | None, capsule: Capsule, source: str) -> list[Rival]:
    """`earlier_bodies` from the function's rows in `history` (none for a buffer with no file, or when the
    history cannot be read)."""
    if history is None or capsule.path is None:
        return []
    try:
        records = history.attempts(capsule.path, capsule.qualname, limit=RECORDS_READ)
    except sqlite3.Error as error:
        log.warning("pycapsule: could not read the history in %s: %s", history.path, error)
        return []
    return earlier_bodies(records, capsule, source)


def earlier_bodies(records: Sequence[AttemptRecord], capsule: Capsule, source: str,
                   most: int = RIVALS) -> list[Rival]:
    """The bodies earlier runs called passed (`records`, the function's history, newest first), spliced
    into the capsule's module as it is now: at most `most`, each other code than `source`'s and than each
    other. A body that no longer fits the function's header is left out."""
    seen = {code_key(source)}
    rivals: list[Rival] = []
    for record in records:
        if len(rivals) >= most:
            break
        if record.verdict != "passed" or record.mode == "check" or not record.code:
            continue
        try:
            other = splice(capsule, record.code).new_source
        except (UnusableReply, CapsuleError):
            continue
        key = code_key(other)
        if key not in seen:
            seen.add(key)
            rivals.append(Rival(other, f"the body a run passed on {_when(record.created)}"))
    return rivals


def disagreements(sandbox: Sandbox, capsule: Capsule, source: str, rivals: Sequence[Rival], *,
                  first_calls: Sequence[str], examples: bool, tests: ProjectTests | None, root: Path | None,
                  job_timeout: float, probe_timeout: float, cancel: threading.Event | None = None
                  ) -> tuple[Disagreement, ...]:
    """The calls on which the body in `source` and each rival that also passes show different things
    (`SHOWN` at most): `first_calls` (the suggested examples') first, then the examples' neighbours and the
    inputs the annotations admit. A rival passes when the examples (if `examples`) and `tests` (when given)
    pass on it. Outputs that differ between two runs of the same body, or are long, do not count."""
    if not rivals or not (examples or tests is not None):
        return ()
    calls = _calls(capsule, first_calls)
    if not calls:
        return ()
    ours = stable_outputs(sandbox, capsule, source, calls, probe_timeout, cancel)
    if ours is None:
        return ()
    found: list[Disagreement] = []
    for rival in rivals:
        if len(found) >= SHOWN or _stopped(cancel):
            break
        if not _passes(sandbox, capsule, rival.source, examples=examples, tests=tests, root=root,
                       timeout=job_timeout, cancel=cancel):
            continue
        theirs = stable_outputs(sandbox, capsule, rival.source, calls, probe_timeout, cancel)
        if theirs is None:
            continue
        taken = {d.call for d in found}
        found += [Disagreement(call, mine, its, rival.label)
                  for call, mine, its in zip(calls, ours, theirs, strict=True)
                  if mine is not None and its is not None and mine != its and call not in taken]
    return tuple(found[:SHOWN])


def _calls(capsule: Capsule, first: Sequence[str]) -> tuple[str, ...]:
    calls = dict.fromkeys([*first, *probe_calls(capsule), *signature_calls(capsule)])
    return tuple(calls)[:PROBE_LIMIT]


def _passes(sandbox: Sandbox, capsule: Capsule, source: str, *, examples: bool, tests: ProjectTests | None,
            root: Path | None, timeout: float, cancel: threading.Event | None) -> bool:
    if examples and not sandbox.run(job_for(capsule, source, timeout, root), cancel).passed:
        return False
    return tests is None or tests.run(sandbox, source, cancel)[0].ok


def _stopped(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def _when(created: float) -> str:
    return datetime.datetime.fromtimestamp(created).strftime("%Y-%m-%d %H:%M")


def _shown(output: str) -> str:
    if not output:
        return "(nothing)"
    lines = output.split("\n")
    return lines[-1] if output.startswith("Traceback (most recent call last)") else " ⏎ ".join(lines)
