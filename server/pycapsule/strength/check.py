"""A body's mutants run against its examples and the project's tests: how many small changes they catch.

A mutant is caught when its examples fail (or it crashes, hangs past the body's own time many times over,
or runs out of memory) or, when its examples still pass, the project's tests fail. A mutant on a line that
neither the examples nor the tests ran cannot behave differently there, so it survives without a run. The
examples run a job per mutant in the warm sandbox under the body's own limits; the mutants the tests judge
run in one job (`ProjectTests.run_many`: pytest starts once, each mutant in a forked run). The time a check
may take is bounded (`Budget`), and what was left unrun is said (`Strength.capped`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pycapsule.capsule import Capsule
from pycapsule.config import Settings
from pycapsule.executor import job_for
from pycapsule.sandbox.api import Sandbox
from pycapsule.strength.examples import SuggestedExample, suggest_examples
from pycapsule.strength.mutants import Mutant, mutants_of
from pycapsule.strength.probes import RaisedOn, raised_on, raised_output
from pycapsule.strength.rivals import Disagreement, Rival, disagreements
from pycapsule.tests_job import ProjectTests, body_lines

SHOWN_SURVIVORS = 3
"""Surviving changes a one-line message names."""


@dataclass(frozen=True)
class Budget:
    """How much a check may run: mutants at most, seconds at most, and how long one mutant may take."""

    mutants: int = 60
    seconds: float = 20.0
    tests_runs: int = 40
    """Mutants run against the project's tests at most: all in one job (one pytest start, then a forked run
    each, `ProjectTests.run_many`), the body itself first."""
    slowdown: float = 20.0
    """A mutant's examples may take this many times the body's own time, at least `min_timeout` (a warm job
    takes ~10 ms): one that takes longer behaves differently (most often it loops), and is caught."""
    min_timeout: float = 0.3
    probe_timeout: float = 2.0
    """The suggested examples' runs (all probes of one module in one job) may take at most this long."""


@dataclass(frozen=True)
class Survivor:
    line: int
    change: str

    def text(self, shift: int = 0) -> str:
        """'line 4: `a < b` -> `a <= b`', its line moved by `shift` (the function moved since)."""
        return f"line {self.line + shift}: {self.change}"


@dataclass(frozen=True)
class Strength:
    """What a body's examples and tests make of its mutants."""

    run: int
    """Mutants judged (caught or surviving)."""
    caught: int
    survivors: tuple[Survivor, ...]
    total: int
    """Mutants the body has, before the cap."""
    seconds: float = 0.0
    suggested: tuple[SuggestedExample, ...] = field(default=())
    """Inputs that tell the body from a survivor, with the body's result, as examples to confirm."""
    raised_on: tuple[RaisedOn, ...] = field(default=())
    """Inputs its annotations admit on which the body raises a type error (`probes`): it is not pinned."""
    disagreements: tuple[Disagreement, ...] = field(default=())
    """Inputs on which another body that passes the same examples and tests shows something else (`rivals`):
    they do not say which is right."""

    @property
    def capped(self) -> bool:
        return self.run < self.total

    @property
    def loose_ends(self) -> bool:
        """Something its examples and tests leave open: a surviving change, an admitted input it raises on,
        or another passing body that shows something else."""
        return bool(self.survivors or self.raised_on or self.disagreements)

    @property
    def share(self) -> float:
        """The caught share (1.0 when the body has no mutant: nothing to change, nothing left loose)."""
        return self.caught / self.run if self.run else 1.0

    def pinned(self, min_caught: float, strict_signatures: bool = False) -> bool:
        """Caught share reaches `min_caught` (and, when `strict_signatures`, no admitted input raises)."""
        return self.share >= min_caught and not (strict_signatures and self.raised_on)

    def describe(self) -> str:
        """'they catch 9 of 12 small changes' (', 60 of 140 tried' when capped), and the admitted inputs
        it raises on."""
        text = f"they catch {self.caught} of {self.run} small change{'' if self.run == 1 else 's'}"
        text += f" ({self.run} of the {self.total} it has were tried)" if self.capped else ""
        if self.raised_on:
            text += ("; on inputs its annotations admit, "
                     + "; ".join(raised.text() for raised in self.raised_on))
        if self.disagreements:
            text += ("; another body that passes them disagrees: "
                     + "; ".join(found.text() for found in self.disagreements))
        return text

    def survivors_text(self, most: int = SHOWN_SURVIVORS, shift: int = 0) -> str:
        """'line 4: `a < b` -> `a <= b`; line 7: ...' (and 'and 3 more'), the lines moved by `shift`."""
        shown = "; ".join(survivor.text(shift) for survivor in self.survivors[:most])
        more = len(self.survivors) - most
        return shown + (f"; and {more} more" if more > 0 else "")

    def as_json(self) -> dict[str, Any]:
        return {"run": self.run, "caught": self.caught, "total": self.total, "capped": self.capped,
                "seconds": round(self.seconds, 3),
                "survivors": [{"line": s.line, "change": s.change} for s in self.survivors],
                "raised_on": [raised.as_json() for raised in self.raised_on],
                "disagreements": [found.as_json() for found in self.disagreements]}


def measure_strength(sandbox: Sandbox, capsule: Capsule, source: str, *, examples: bool,
                     tests: ProjectTests | None, lines_run: frozenset[int], body_seconds: float,
                     job_timeout: float, root: Path | None, cancel: threading.Event | None = None,
                     budget: Budget = Budget()) -> tuple[Strength, tuple[Mutant, ...]]:
    """The strength of the body in `source` (the capsule's module with it), and its surviving mutants.

    `examples`: whether the capsule's examples check it; `tests`: the project's tests that passed on it;
    `lines_run`: the module lines the examples and tests ran; `body_seconds`: how long its examples took."""
    began = time.monotonic()
    try:
        found = mutants_of(source, capsule.qualname, limit=budget.mutants)
    except ValueError:
        return Strength(0, 0, (), 0), ()
    statements = body_lines(source, capsule.qualname)
    timeout = min(job_timeout, max(budget.min_timeout, budget.slowdown * body_seconds))
    # nothing ran these lines: no example or test can tell their changes, which survive without a run
    unrun = [m for m in found.mutants if lines_run and m.line in statements and m.line not in lines_run]
    survivors: list[Mutant] = list(unrun)
    judged, caught = len(unrun), 0
    for_tests: list[Mutant] = []  # their examples pass (or they have none): the project's tests judge them
    for mutant in found.mutants:
        if _stopped(cancel) or time.monotonic() - began > budget.seconds:
            break
        if mutant in unrun:
            continue
        if examples and not _passes_examples(sandbox, capsule, mutant.source, timeout, root, cancel):
            judged += 1
            caught += 1
            continue
        if tests is not None:
            if len(for_tests) < budget.tests_runs:
                for_tests.append(mutant)
            continue
        if not examples:
            continue  # nothing can judge it (the caller checks that something does)
        judged += 1
        survivors.append(mutant)
    if tests is not None and for_tests:
        for mutant, passed in _tests_verdicts(sandbox, tests, source, for_tests, began, budget, cancel):
            judged += 1
            if passed:
                survivors.append(mutant)
            else:
                caught += 1
    survivors.sort(key=found.mutants.index)
    strength = Strength(judged, caught, tuple(Survivor(m.line, m.change) for m in survivors), found.total,
                        time.monotonic() - began)
    return strength, tuple(survivors)


def measured(settings: Settings, examples: bool, tests: ProjectTests | None) -> bool:
    """Whether a passing body's strength is measured: the check is on (`max_mutants`) and something judges
    its changes (its examples run, or its project's tests passed)."""
    return settings.max_mutants > 0 and (examples or tests is not None)


def assess(sandbox: Sandbox, capsule: Capsule, source: str, settings: Settings, *, examples: bool,
           tests: ProjectTests | None, root: Path | None, lines_run: frozenset[int] = frozenset(),
           body_seconds: float = 0.0, cancel: threading.Event | None = None,
           rivals: Sequence[Rival] = ()) -> Strength | None:
    """What `generate`, the editor and `check --strength` say of a passing body: its strength and, when it
    has survivors, examples that would catch them; the inputs on which `rivals` (other bodies of the
    function) that pass as well show something else, offered as examples too. None when the check is off
    (`max_mutants` 0) or nothing checks the body (no example runs and no test passed)."""
    if not measured(settings, examples, tests):
        return None
    budget = Budget(mutants=settings.max_mutants)
    strength, survivors = measure_strength(sandbox, capsule, source, examples=examples, tests=tests,
                                           lines_run=lines_run, body_seconds=body_seconds,
                                           job_timeout=settings.job_timeout, root=root, cancel=cancel,
                                           budget=budget)
    timeout = min(settings.job_timeout, budget.probe_timeout)
    raised = () if _stopped(cancel) else raised_on(sandbox, capsule, source, timeout=timeout, cancel=cancel)
    suggested = [SuggestedExample(r.call, raised_output(r), "", capsule.def_line,
                                  f"raises {r.exception} on an input its annotations admit") for r in raised]
    if survivors and not _stopped(cancel):
        suggested += suggest_examples(sandbox, capsule, source, survivors, timeout=timeout, cancel=cancel)
    strength = replace(strength, raised_on=raised, suggested=tuple(suggested))
    return compared(strength, sandbox, capsule, source, settings, rivals, examples=examples, tests=tests,
                    root=root, cancel=cancel)


def compared(strength: Strength, sandbox: Sandbox, capsule: Capsule, source: str, settings: Settings,
             rivals: Sequence[Rival], *, examples: bool, tests: ProjectTests | None, root: Path | None,
             cancel: threading.Event | None = None) -> Strength:
    """`strength` with the inputs on which `rivals` that pass as well show something else than the body in
    `source` (its suggested examples' calls first), each offered as an example with the body's value."""
    if not rivals or _stopped(cancel):
        return strength
    found = disagreements(sandbox, capsule, source, rivals, first_calls=[s.call for s in strength.suggested],
                          examples=examples, tests=tests, root=root, job_timeout=settings.job_timeout,
                          probe_timeout=min(settings.job_timeout, Budget().probe_timeout), cancel=cancel)
    disputed = {d.call for d in strength.disagreements}
    found = tuple(d for d in found if d.call not in disputed)
    offered = {example.call for example in strength.suggested}
    added = [SuggestedExample(d.call, d.output, d.other_output, capsule.def_line,
                              f"{d.other} shows {d.other_output or 'nothing'}")
             for d in found if d.call not in offered]
    return replace(strength, suggested=(*strength.suggested, *added),
                   disagreements=(*strength.disagreements, *found))


def _tests_verdicts(sandbox: Sandbox, tests: ProjectTests, source: str, mutants: list[Mutant], began: float,
                    budget: Budget, cancel: threading.Event | None) -> list[tuple[Mutant, bool]]:
    """Each of `mutants` the project's tests judged in the time left: whether they still pass on it.

    One job runs them all, the body itself first (`ProjectTests.run_many`): its run says how long one takes
    (a mutant may take `budget.slowdown` times that) and that the job's runs can be trusted. When the body
    does not pass there (a plugin that does not survive the job's forks), each mutant runs in a job of its
    own, as long as the time lasts. Mutants not run in time are left out (unjudged)."""
    left = budget.seconds - (time.monotonic() - began)
    if _stopped(cancel) or left <= 0:
        return []
    body, *runs = tests.run_many(sandbox, [source, *(m.source for m in mutants)], cancel,
                                 pace=budget.slowdown, start_within=left)
    if body.ok:
        return [(mutant, run.ok) for mutant, run in zip(mutants, runs, strict=True) if not run.unrun]
    verdicts = []
    for mutant in mutants:
        if _stopped(cancel) or time.monotonic() - began > budget.seconds:
            break
        run, _ = tests.run(sandbox, mutant.source, cancel)
        verdicts.append((mutant, run.ok))
    return verdicts


def _stopped(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def _passes_examples(sandbox: Sandbox, capsule: Capsule, source: str, timeout: float, root: Path | None,
                     cancel: threading.Event | None) -> bool:
    return sandbox.run(job_for(capsule, source, timeout, root), cancel).passed
