"""`pycapsule generate PATH[::QUALNAME]`: fill function bodies until their doctests pass.

Without ::QUALNAME every stub in PATH is filled, in file order. Prints a unified diff (or applies it with
--write, atomically and only when the file did not change meanwhile) and shows progress on stderr. `--write`
after a run without it, on the same file with the same settings, writes exactly what that run showed, with
no model call (previews.py). Exit codes come from `pycapsule.exit_codes`. A run that ends early keeps what it
has: on Ctrl-C or when the model or the sandbox cannot be used, the bodies that already passed are written
(or shown) and the functions left undone are named.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pycapsule.capsule import (
    CapsuleError,
    FileChangedError,
    SourceFile,
    capsule_by_qualname,
    read_capsules,
    write_source_file,
)
from pycapsule.commands import SUMMARIES, previews, wording
from pycapsule.commands.model import install_before_a_run
from pycapsule.commands.options import (
    Subcommands,
    add_backend,
    add_json,
    add_model,
    add_model_timeouts,
    add_python,
    add_target,
    setting,
)
from pycapsule.commands.output import CommandError, print_document, say
from pycapsule.commands.progress import PlainProgress, outcome_line, progress_for
from pycapsule.commands.targets import ReadTarget, no_such_function, read_target
from pycapsule.config import load_settings, project_root
from pycapsule.debugging.signature import SignatureMismatch, splice
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.engine import Engine
from pycapsule.events import Closest, Outcome
from pycapsule.exit_codes import ExitCode
from pycapsule.interpreter import settings_interpreter
from pycapsule.signals import handling
from pycapsule.strength.examples import add_examples as add_suggested
from pycapsule.terminal import terminal_safe

PREFIX = "pycapsule"
_UNAVAILABLE = {"model": ExitCode.MODEL_UNAVAILABLE, "sandbox": ExitCode.SANDBOX_UNAVAILABLE}


def register(commands: Subcommands) -> None:
    generate = commands.add_parser("generate", help=SUMMARIES["generate"])
    add_target(generate)
    generate.add_argument("--write", action="store_true", help="apply the change instead of printing a diff")
    generate.add_argument("--write-closest", action="store_true",
                          help="like --write, and for a function that gives up write its closest try "
                               "(still failing: the exit code says so)")
    generate.add_argument("--add-examples", action="store_true",
                          help="for a body its examples do not pin down, add the suggested examples (the "
                               "body's own results: check them) to its docstring, in the diff or --write")
    generate.add_argument("--max-attempts", type=setting("max_attempts"), metavar="N",
                          help="attempts per function (default: the max_attempts setting, 3)")
    add_model(generate)
    add_model_timeouts(generate)
    add_backend(generate)
    add_python(generate)
    add_json(generate)


def run(args: argparse.Namespace) -> int:
    _quiet_logging()
    args.write = args.write or args.write_closest
    try:
        read = read_target(args.target, "generate")
        qualnames = _qualnames(read)
    except CommandError as error:
        say(PREFIX, wording.full_stop(error.message))
        if args.json:
            return print_document("generate", error.code, error, path=args.target.partition("::")[0])
        return int(error.code)

    overrides = {"max_attempts": args.max_attempts, "model": args.model, "sandbox": args.backend,
                 "inactivity_timeout": args.inactivity_timeout, "request_timeout": args.request_timeout,
                 "python": args.python}
    loaded = load_settings(read.target.path, overrides)
    for warning in loaded.warnings:
        say(PREFIX, warning)
    if not qualnames:
        say(PREFIX, wording.no_stubs(read.target.path))
    else:
        say(PREFIX, wording.model_used(endpoint_description(loaded.settings)))
    root = project_root(read.target.path)
    interpreter = settings_interpreter(loaded, root)
    target = previews.Target.of(read.target.path, read.target.qualname, read.data, loaded.settings,
                                interpreter.describe(), args.add_examples)
    if args.write and qualnames:
        preview = previews.take(target)
        if preview is not None:
            say(PREFIX, wording.writing_preview(preview.created))
            return _write_preview(args, read, preview)
        since = previews.outdated(target)
        if since is not None:
            say(PREFIX, wording.preview_outdated(since))
    if qualnames:
        say(PREFIX, wording.python_used(interpreter.describe()))
    if loaded.settings.uses_embedded_model and _has_a_stub(read, qualnames):
        # one bar, not the engine's lines; a function with a body may already pass: nothing to install for it
        install_before_a_run(loaded.settings.embedded_model_size, loaded.settings.embedded_model_file)
    engine = Engine(loaded.settings, project_root=root, interpreter=interpreter)
    try:
        done = _fill(engine, read, qualnames, add_examples=args.add_examples)
        done.embedded = loaded.settings.uses_embedded_model
        with handling(signal.SIGINT, signal.SIG_IGN):  # a second Ctrl-C must not cost the bodies that passed
            return _finish(args, read, done, target)
    finally:
        with contextlib.suppress(KeyboardInterrupt):  # the answer is given: a Ctrl-C now only hurries
            engine.close()


@dataclass
class _Run:
    """What a run did so far: `text` holds every body that passed or was generated."""

    text: str
    targets: list[str]
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    interrupted: str | None = None
    """The target under way when Ctrl-C came ('' between targets); None when not interrupted."""
    attempts_when_interrupted: int = 0
    seconds_when_interrupted: float = 0.0
    """How long the target under way had run when Ctrl-C came."""
    stopped: Outcome | None = None
    """The outcome that showed the model or the sandbox cannot be used."""
    embedded: bool = False
    """The embedded local model answered (a stronger one is then the hint for a function that gives up)."""


def _qualnames(read: ReadTarget) -> list[str]:
    text, target = read.source.text, read.target
    try:
        if target.qualname is not None:
            return [capsule_by_qualname(text, target.qualname, target.path).qualname]
        return [c.qualname for c in read_capsules(text, target.path) if c.is_stub]
    except CapsuleError:  # the file parsed (read_target): the function is not in it
        known = [capsule.qualname for capsule in read_capsules(text, target.path)]
        raise no_such_function(target.path, target.qualname or "", known) from None


def _has_a_stub(read: ReadTarget, qualnames: list[str]) -> bool:
    """Whether a target is a stub, which surely needs the model (a function with a body is checked first)."""
    stubs = {c.qualname for c in read_capsules(read.source.text, read.target.path) if c.is_stub}
    return any(name in stubs for name in qualnames)


def _fill(engine: Engine, read: ReadTarget, qualnames: list[str], add_examples: bool = False) -> _Run:
    done = _Run(read.source.text, qualnames)
    progress = progress_for(sys.stderr)
    qualname = ""
    try:
        for qualname in qualnames:
            outcome = _one(engine, progress, done.text, qualname, read.target.path)
            done.outcomes[qualname] = outcome
            if outcome.new_source is not None:
                done.text = outcome.new_source
            _tell_suggested(progress, outcome)
            if add_examples and outcome.strength is not None and outcome.strength.suggested:
                done.text = add_suggested(done.text, qualname, outcome.strength.suggested, read.target.path)
            if outcome.unavailable is not None:
                done.stopped = outcome
                break
            qualname = ""
    except KeyboardInterrupt:
        done.interrupted, done.attempts_when_interrupted = qualname, progress.attempt
        done.seconds_when_interrupted = time.monotonic() - progress.began if qualname else 0.0
    finally:
        progress.close()
    return done


def _one(engine: Engine, progress: PlainProgress, text: str, qualname: str, path: Path) -> Outcome:
    try:
        capsule = capsule_by_qualname(text, qualname, path)
    except CapsuleError as error:  # an earlier target's change made this one unreadable
        message = wording.unreadable_function(qualname, error.message)
        outcome = Outcome("error", message, None, (), 0, qualname)
        progress.say(outcome_line(outcome))
        return outcome
    # a function that has a body is checked first and only fixed when its doctests fail
    return progress.follow(qualname, engine.generate(capsule, from_current_body=True))


def _finish(args: argparse.Namespace, read: ReadTarget, done: _Run, target: previews.Target) -> int:
    path, original = read.target.path, read.source.text
    closest = _with_closest(done, path)
    result_text = closest if args.write_closest else done.text
    diff = _diff(path, original, result_text)
    error = _early_end(done)
    written = False
    if args.write and result_text != original:
        written, not_written = _write(read, result_text)
        error = error or not_written
    if error is not None and error.kind in ("interrupted", "model", "sandbox"):
        say(PREFIX, _what_was_kept(done, error, written, bool(args.write)))
    statuses = [done.outcomes[name].status if name in done.outcomes else "not_run" for name in done.targets]
    passed = all(status == "passed" for status in statuses)
    code = error.code if error is not None else _exit_code(statuses)
    closest_diffs = {name: _diff(path, done.text, _with_closest(done, path, only=name))
                     for name, _ in _closest_tries(done)}
    results = [_result(done, name, closest_diffs.get(name, "")) for name in done.targets]
    if not args.json:
        _tell_closest(done, closest_diffs, bool(args.write_closest))
    if not args.write and error is None and done.targets:
        previews.keep(target, previews.Preview(done.text, passed, results, time.time(), closest_text=closest))
    if args.json:
        return print_document("generate", code, error, path=str(path), passed=passed, written=written,
                              diff=diff, results=results)
    if not args.write:
        # the model's code is untrusted: on a terminal, its control characters are shown, not obeyed
        sys.stdout.write(terminal_safe(diff) if sys.stdout.isatty() else diff)
        sys.stdout.flush()
    return int(code)


def _closest_tries(done: _Run) -> list[tuple[str, Closest]]:
    """The functions that gave up with a try to show, and that try, in target order."""
    tries = [(name, done.outcomes[name].closest) for name in done.targets if name in done.outcomes]
    return [(name, closest) for name, closest in tries if closest is not None]


def _with_closest(done: _Run, path: Path, only: str | None = None) -> str:
    """The run's text with, for each function that gave up (or only `only`), its closest try as its body."""
    text = done.text
    for name, closest in _closest_tries(done):
        if only is not None and name != only:
            continue
        try:
            text = splice(capsule_by_qualname(text, name, path), closest.code).new_source
        except (CapsuleError, SignatureMismatch):
            continue
    return text


def _tell_closest(done: _Run, diffs: dict[str, str], written: bool) -> None:
    """For each function that gave up: its closest try as a diff marked failing (`diffs`), and the one next
    step."""
    for name, closest in _closest_tries(done):
        say(PREFIX, wording.closest_try(name, closest, written))
        diff = diffs[name]
        if diff:
            shown = "".join(f"  {line}" for line in diff.splitlines(keepends=True))
            sys.stderr.write(terminal_safe(shown) if sys.stderr.isatty() else shown)
        say(PREFIX, wording.next_step(name, done.outcomes[name], done.embedded))


def _write_preview(args: argparse.Namespace, read: ReadTarget, preview: previews.Preview) -> int:
    """`--write` of exactly what an earlier run showed."""
    path = read.target.path
    text = preview.closest_text if args.write_closest and preview.closest_text else preview.text
    written, error = _write(read, text) if text != read.source.text else (False, None)
    for result in preview.results:
        say(PREFIX, wording.result_line(result["qualname"], result["status"], result["message"]))
    code = error.code if error is not None else _exit_code([result["status"] for result in preview.results])
    if args.json:
        return print_document("generate", code, error, path=str(path), passed=preview.passed, written=written,
                              diff=_diff(path, read.source.text, text), results=preview.results)
    return int(code)


def _exit_code(statuses: list[str]) -> ExitCode:
    """0 when every target passed and is pinned down, 5 when every one passed but some only loosely."""
    if all(status == "passed" for status in statuses):
        return ExitCode.OK
    if all(status in ("passed", "passed_loosely") for status in statuses):
        return ExitCode.PASSED_LOOSELY
    return ExitCode.FAILED


def _tell_suggested(progress: PlainProgress, outcome: Outcome) -> None:
    """The examples that would catch what a loosely pinned body's examples miss, as doctests to confirm."""
    if outcome.strength is None or not outcome.strength.suggested:
        return
    doctests = (example.doctest() for example in outcome.strength.suggested)
    for line in wording.suggested_examples(outcome.qualname, doctests):
        progress.say(line)


def _diff(path: Path, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def _write(read: ReadTarget, text: str) -> tuple[bool, CommandError | None]:
    """`text` written over the file, only if it still holds what was read; (written, why not)."""
    path = read.target.path
    try:
        write_source_file(path, SourceFile(text, read.source.encoding), read.data)
    except (OSError, FileChangedError) as failure:
        reason = failure.strerror if isinstance(failure, OSError) and failure.strerror else failure
        not_written = CommandError(wording.not_written(path, reason), kind="write", code=ExitCode.FAILED)
        say(PREFIX, not_written.message)
        return False, not_written
    say(PREFIX, wording.wrote(path))
    return True, None


def _early_end(done: _Run) -> CommandError | None:
    if done.interrupted is not None:
        return CommandError(wording.INTERRUPTED, kind="interrupted", code=ExitCode.INTERRUPTED)
    if done.stopped is not None:
        part = done.stopped.unavailable or "model"
        return CommandError(done.stopped.message, kind=part, code=_UNAVAILABLE[part])
    return None


def _what_was_kept(done: _Run, error: CommandError, written: bool, write: bool) -> str:
    """One line: why the run ended early, which bodies it kept and which functions are left undone."""
    kept = [name for name in done.targets if name in done.outcomes and done.outcomes[name].new_source]
    left = [name for name in done.targets if name not in kept]
    return wording.what_was_kept(error.kind, kept, left, written, write)


def _result(done: _Run, qualname: str, closest_diff: str) -> dict[str, Any]:
    """One target in the JSON document; a target the run did not finish is "cancelled" (under way when
    interrupted) or "not_run"."""
    outcome = done.outcomes.get(qualname)
    if outcome is not None:
        return {
            "qualname": qualname, "status": outcome.status, "message": outcome.message,
            "attempts": outcome.attempts, "prompt_tokens": outcome.usage.prompt_tokens,
            "completion_tokens": outcome.usage.completion_tokens, "seconds": round(outcome.seconds, 3),
            "changed": outcome.new_source is not None, "verified_by": outcome.verified_by,
            "mutants": None if outcome.strength is None else outcome.strength.as_json(),
            "suggested_examples": [] if outcome.strength is None else [
                example.as_json() for example in outcome.strength.suggested],
            "closest": None if outcome.closest is None else {
                "attempt": outcome.closest.attempt, "failing": outcome.closest.failing,
                "diff": closest_diff},
        }
    unavailable = None if done.interrupted is not None else \
        (done.stopped.unavailable if done.stopped else None) or "model"
    under_way = qualname == done.interrupted
    return {
        "qualname": qualname, "status": "cancelled" if under_way else "not_run",
        "message": wording.left_undone(qualname, under_way, unavailable),
        "attempts": done.attempts_when_interrupted if under_way else 0, "prompt_tokens": 0,
        "completion_tokens": 0, "seconds": round(done.seconds_when_interrupted, 3) if under_way else 0.0,
        "changed": False, "verified_by": "", "mutants": None, "suggested_examples": [], "closest": None,
    }


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
