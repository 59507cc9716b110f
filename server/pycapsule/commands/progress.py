"""`generate`'s progress on stderr, from the loop's events: what the user waits for, never what was
written for the model. The words are `pycapsule.event_text`'s (the language server shows the same), placed
on a line by `commands.wording`.

On a terminal: one live line (target, attempt n/N, the phase under way with its figures, elapsed seconds),
redrawn 8 times a second, with each failed attempt's headline and condensed failure, the model's start
lines and a stalled request's reason printed above it. Elsewhere (a pipe, a log): plain lines, one per
event, and for the phases one when a phase starts (with its first figures) and one when a request stalls.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, TextIO

from pycapsule.commands import wording
from pycapsule.event_text import attempt_label, describe, phase
from pycapsule.event_text import outcome_line as _outcome_line
from pycapsule.events import (
    AttemptFinished,
    AttemptStarted,
    Checking,
    Event,
    Finished,
    ModelProgress,
    Notice,
    Outcome,
    Pinning,
)
from pycapsule.terminal import terminal_safe

__all__ = ["LiveProgress", "PlainProgress", "outcome_line", "progress_for"]


def outcome_line(outcome: Outcome) -> str:
    """The end of one function: its status and the loop's message, then its time and tokens, except after
    a model or sandbox that cannot be used, whose one sentence is the whole story."""
    return wording.outcome_line(outcome, _outcome_line(outcome))


class PlainProgress:
    """Plain lines on stderr (a pipe, a log)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.attempt = 0
        """The attempt under way (0: none yet, or checking the current body)."""
        self.max_attempts = 0
        self.began = time.monotonic()
        """When the current target started."""
        self.phase: tuple[int, str] | None = None
        """The attempt and phase of the model request under way (a phase's later figures are no new line)."""
        self.stalled = ""
        """Why the request under way is stalled, once said ('' while it moves)."""

    def say(self, text: str) -> None:
        print(terminal_safe(f"pycapsule: {text}"), file=self.stream, flush=True)

    def follow(self, qualname: str, events: Iterator[Event]) -> Outcome:
        """Shows `events` until their `Finished`; an interruption closes the stream (the model call ends)."""
        self.attempt = self.max_attempts = 0
        self.began = time.monotonic()
        try:
            for event in events:
                self.on_event(qualname, event)
                if isinstance(event, Finished):
                    return event.outcome
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
        raise RuntimeError("the loop ended without a result")

    def place(self, qualname: str, event: Event) -> tuple[str, str] | None:
        """(where, what) for an event worth a line: where is "f: attempt 2/5", "f" (checking the current
        body) or "" (a notice, about no function in particular); None for the other events."""
        if isinstance(event, AttemptStarted):
            self.attempt, self.max_attempts = event.attempt, event.max_attempts
            self.phase = None
        described = describe(event)
        if described is None:
            return None
        attempt, what = described
        if isinstance(event, Notice):
            return "", what
        label = attempt_label(attempt, self.max_attempts)
        return wording.function_at(qualname, label), what

    def news(self, event: ModelProgress) -> bool:
        """Whether a model request's progress is worth a plain line: a new phase, a line of the model's start,
        a stall."""
        progress = event.progress
        key = (event.attempt, progress.phase)
        new = key != self.phase or bool(progress.note) or progress.stalled not in ("", self.stalled)
        self.phase, self.stalled = key, progress.stalled
        return new

    def on_event(self, qualname: str, event: Event) -> None:
        if isinstance(event, AttemptFinished) and event.passed:
            return  # the outcome line says it
        if isinstance(event, ModelProgress) and not self.news(event):
            return
        if isinstance(event, Finished):
            self.say(outcome_line(event.outcome))
        elif (placed := self.place(qualname, event)) is not None:
            where, what = placed
            self.say(wording.placed(where, what))
            if isinstance(event, AttemptFinished):
                self.show_failure(event.failure)

    def show_failure(self, failure: str) -> None:
        for line in failure.splitlines():
            print(terminal_safe(f"    {line}"), file=self.stream, flush=True)

    def close(self) -> None:
        pass


class _StatusLine:
    """What the live line shows, worked out each time it is drawn (so the seconds go on while waiting)."""

    def __init__(self, started: float) -> None:
        from rich.spinner import Spinner

        self.spinner = Spinner("dots")
        self.label = ""
        self.doing = ""
        """The phase under way with its figures (event_text.phase), or what the sandbox runs."""
        self.started = started

    def attempt(self, label: str) -> None:
        self.label, self.doing = label, ""

    def text(self) -> str:
        parts = [self.label, self.doing, f"{time.monotonic() - self.started:.1f} s"]
        return " · ".join(part for part in parts if part)

    def __rich__(self) -> Any:
        from rich.text import Text

        self.spinner.update(text=Text(terminal_safe(self.text())))
        return self.spinner


class LiveProgress(PlainProgress):
    """A live status line on a terminal; failures and results printed above it."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console

        super().__init__(stream)
        self.console = Console(file=stream, highlight=False, emoji=False)  # ":x:" in a failure stays text
        self.line: _StatusLine | None = None
        self.live: Any = None

    def say(self, text: str) -> None:
        self.console.print(f"[bold]pycapsule[/]: {_escape(terminal_safe(text))}", markup=True, soft_wrap=True)

    def on_event(self, qualname: str, event: Event) -> None:
        if isinstance(event, AttemptStarted):
            where, what = self.place(qualname, event) or ("", "")
            self._line().attempt(f"{where}: {what}")
        elif isinstance(event, ModelProgress):
            progress = event.progress
            if progress.note:
                self.say(progress.note)
            elif progress.stalled and progress.stalled != self.stalled:
                self.console.print(f"[yellow]{_escape(terminal_safe(progress.stalled))}[/]", markup=True,
                                   highlight=False)
            self.stalled = progress.stalled
            self._line().doing = phase(replace(progress, stalled="", note=""))
        elif isinstance(event, Checking | Pinning):
            self._line().doing = describe(event)[1]  # type: ignore[index]
        elif isinstance(event, AttemptFinished) and not event.passed:
            where, what = self.place(qualname, event) or ("", "")
            self.console.print(f"[red]{_escape(terminal_safe(where))}[/]: {_escape(terminal_safe(what))}",
                               markup=True, highlight=False)
            self.show_failure(event.failure)
        elif isinstance(event, Finished):
            self.close()
            super().on_event(qualname, event)
        else:
            super().on_event(qualname, event)

    def show_failure(self, failure: str) -> None:
        for line in failure.splitlines():
            self.console.print(terminal_safe(f"    {line}"), markup=False, highlight=False)

    def _line(self) -> _StatusLine:
        if self.line is None:
            from rich.live import Live

            self.line = _StatusLine(self.began)
            self.live = Live(self.line, console=self.console, refresh_per_second=8, transient=True)
            self.live.start()
        return self.line

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
        self.live = self.line = None


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def progress_for(stream: TextIO) -> PlainProgress:
    return LiveProgress(stream) if stream.isatty() else PlainProgress(stream)
