"""`pycapsule generate PATH[::QUALNAME]`: fill function bodies until their doctests pass.

Without ::QUALNAME every stub in PATH is filled, in file order. Prints a unified diff (or applies
it with --write, atomically and only when the file did not change meanwhile), shows progress on
stderr, and exits 0 only when every target passed its doctests; 1 otherwise; 2 for usage errors.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import difflib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from pycapsule.capsule import CapsuleError, SourceFile, capsule_by_qualname, read_capsules, read_source_file
from pycapsule.commands.targets import Target, UsageError, parse_target
from pycapsule.config import load_settings, project_root
from pycapsule.engine import Engine
from pycapsule.loop import (
    AttemptFinished,
    AttemptStarted,
    Event,
    Finished,
    ModelRetrying,
    Notice,
    Outcome,
    TokensStreamed,
)
from pycapsule.terminal import terminal_safe


def run(args: argparse.Namespace) -> int:
    _quiet_logging()
    try:
        target = parse_target(args.target, "generate")
        original_bytes = target.path.read_bytes()  # first: a change after this is caught before writing
        source = read_source_file(target.path)
        qualnames = _qualnames(source.text, target)
    except UsageError as error:
        return _fail(f"{error}.")
    except CapsuleError as error:
        message = error.message.rstrip(".")
        if str(target.path) not in message:
            where = f" line {error.line}" if error.line and "line" not in message else ""
            message = f"{target.path}{where}: {message}"
        return _fail(f"{message}.")
    except OSError as error:
        return _fail(f"cannot read {args.target}: {error.strerror or error}.")

    overrides = {"max_attempts": args.max_attempts, "model": args.model, "sandbox": args.backend}
    loaded = load_settings(target.path, overrides)
    for warning in loaded.warnings:
        print(terminal_safe(f"pycapsule: {warning}"), file=sys.stderr)
    if not qualnames:
        print(f"pycapsule: nothing to do: {target.path} has no stub functions.", file=sys.stderr)
        return 0 if not args.json else _print_json(target.path, [], "", False)

    progress = _progress(sys.stderr)
    outcomes: list[Outcome] = []
    text = source.text
    try:
        with Engine(loaded.settings, project_root=project_root(target.path)) as engine:
            for qualname in qualnames:
                try:
                    capsule = capsule_by_qualname(text, qualname, target.path)
                except CapsuleError as error:  # an earlier target's change made this one unreadable
                    outcomes.append(Outcome("error", f"{qualname}: {error.message}", None, (), 0, qualname))
                    progress.say(_outcome_line(outcomes[-1]))
                    continue
                # a function that has a body is checked first and only fixed when its doctests fail
                outcome = progress.follow(qualname, engine.generate(capsule, from_current_body=True))
                outcomes.append(outcome)
                if outcome.new_source is not None:
                    text = outcome.new_source
    finally:
        progress.close()

    diff = "".join(difflib.unified_diff(
        source.text.splitlines(keepends=True), text.splitlines(keepends=True),
        fromfile=f"a/{target.path}", tofile=f"b/{target.path}"))
    written = False
    if args.write and text != source.text:
        try:
            write_atomically(target.path, SourceFile(text, source.encoding), original_bytes)
            written = True
        except (OSError, FileChangedError) as error:
            print(terminal_safe(f"pycapsule: {target.path} was not written: {error}"), file=sys.stderr)
            outcomes.append(Outcome("error", str(error), None, (), 0, ""))
    passed = all(o.status == "passed" for o in outcomes)
    if written:
        print(f"pycapsule: wrote {target.path}", file=sys.stderr)
    if args.json:
        _print_json(target.path, outcomes, diff, written)
    elif not args.write:
        # the model's code is untrusted: on a terminal, its control characters are shown, not obeyed
        sys.stdout.write(terminal_safe(diff) if sys.stdout.isatty() else diff)
    return 0 if passed else 1


def _qualnames(text: str, target: Target) -> list[str]:
    if target.qualname is not None:
        return [capsule_by_qualname(text, target.qualname, target.path).qualname]
    return [c.qualname for c in read_capsules(text, target.path) if c.is_stub]


class FileChangedError(Exception):
    pass


def write_atomically(path: Path, source: SourceFile, expected: bytes) -> None:
    """Replace `path` by `source` (same mode), unless its bytes are no longer `expected`."""
    data = codecs.encode(source.text, source.encoding)
    if path.read_bytes() != expected:
        raise FileChangedError("it changed on disk while generating; run again")
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pycapsule", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---- output --------------------------------------------------------------------------------------

def _fail(message: str) -> int:
    print(terminal_safe(f"pycapsule: {message}"), file=sys.stderr)
    return 2


def _outcome_line(outcome: Outcome) -> str:
    tokens = outcome.usage.total_tokens
    return f"{outcome.status}: {outcome.message} ({outcome.seconds:.1f} s, {tokens} tokens)"


def _print_json(path: Path, outcomes: list[Outcome], diff: str, written: bool) -> int:
    results = [{
        "qualname": o.qualname, "status": o.status, "message": o.message, "attempts": o.attempts,
        "prompt_tokens": o.usage.prompt_tokens, "completion_tokens": o.usage.completion_tokens,
        "seconds": round(o.seconds, 3),
    } for o in outcomes if o.qualname]
    passed = all(o.status == "passed" for o in outcomes)
    print(json.dumps({"path": str(path), "passed": passed, "written": written, "diff": diff,
                      "results": results}, indent=2))
    return 0 if passed else 1


def _quiet_logging() -> None:
    """Our log lines on stderr as one line each; tracebacks only with PYCAPSULE_DEBUG=1."""

    class OneLine(logging.Formatter):
        def formatException(self, ei: Any) -> str:
            return super().formatException(ei) if os.environ.get("PYCAPSULE_DEBUG") else ""

        def format(self, record: logging.LogRecord) -> str:
            return super().format(record).rstrip()

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


class _Progress:
    """Plain lines on stderr (a pipe, a log)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def say(self, text: str) -> None:
        print(terminal_safe(f"pycapsule: {text}"), file=self.stream, flush=True)

    def follow(self, qualname: str, events: Any) -> Outcome:
        event: Event
        for event in events:
            self.on_event(qualname, event)
            if isinstance(event, Finished):
                return event.outcome
        raise RuntimeError("the loop ended without a result")

    def on_event(self, qualname: str, event: Event) -> None:
        if isinstance(event, AttemptStarted):
            if event.mode == "check":
                self.say(f"{qualname}: checking the current body")
            else:
                self.say(f"{qualname}: attempt {event.attempt}/{event.max_attempts} ({event.mode})")
        elif isinstance(event, AttemptFinished) and not event.passed:
            self.say(f"{qualname}: attempt {event.attempt} failed: {event.headline}")
            for line in event.condensed.splitlines():
                print(terminal_safe(f"    {line}"), file=self.stream)
        elif isinstance(event, ModelRetrying):
            self.say(f"{qualname}: {event.reason}; retrying in {event.delay:.1f} s")
        elif isinstance(event, Notice):
            self.say(event.message)
        elif isinstance(event, Finished):
            self.say(_outcome_line(event.outcome))

    def close(self) -> None:
        pass


class _RichProgress(_Progress):
    """A live status line on a terminal (attempt n/N and tokens so far); failures printed above it."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console

        super().__init__(stream)
        self.console = Console(file=stream, highlight=False)
        self.status: Any = None
        self.tokens = 0
        self.label = ""

    def say(self, text: str) -> None:
        self.console.print(f"[bold]pycapsule[/]: {escape(terminal_safe(text))}", markup=True, soft_wrap=True)

    def on_event(self, qualname: str, event: Event) -> None:
        if isinstance(event, AttemptStarted):
            self.tokens = 0
            self.label = (f"{qualname}: checking the current body" if event.mode == "check" else
                          f"{qualname}: attempt {event.attempt}/{event.max_attempts} ({event.mode})")
            self._show(escape(terminal_safe(self.label)))
        elif isinstance(event, TokensStreamed):
            self.tokens += 1
            self._show(escape(terminal_safe(f"{self.label}: {self.tokens} pieces streamed")))
        elif isinstance(event, AttemptFinished) and not event.passed:
            self.console.print(f"[red]{escape(terminal_safe(qualname))}: attempt {event.attempt} failed[/]: "
                               f"{escape(terminal_safe(event.headline))}",
                               markup=True, highlight=False)
            for line in event.condensed.splitlines():
                self.console.print(terminal_safe(f"    {line}"), markup=False, highlight=False)
        elif isinstance(event, Finished):
            self.close()
            super().on_event(qualname, event)
        else:
            super().on_event(qualname, event)

    def _show(self, text: str) -> None:
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _progress(stream: TextIO) -> _Progress:
    return _RichProgress(stream) if stream.isatty() else _Progress(stream)
