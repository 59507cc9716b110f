"""Every sentence the command line composes for the user: `generate`'s and `check`'s lines and summaries, the
usage errors of a target, `config`'s listing, `sandbox`'s and `serve`'s lines. What the loop's events and a
run's outcome say is the shared core's (`pycapsule.event_text`, `pycapsule.outcome_text`), placed here on a
line; argparse's help stays with the options it explains.

The functions take typed values and return the text; the commands only print it (through `output.say`, with
its prefix, or on stdout). Nothing here is imported but for types: each command imports only what it uses.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pycapsule.events import Closest, Outcome
    from pycapsule.strength.check import Strength
    from pycapsule.tests_job import ProjectTests, TestsRun


def full_stop(sentence: str) -> str:
    """A sentence ending as one: an error message said on its own line."""
    return sentence if sentence.endswith((".", "?")) else f"{sentence}."


def warning(text: str) -> str:
    return f"warning: {text}"


def model_used(endpoint: str) -> str:
    return f"model: {endpoint}"


def python_used(interpreter: str) -> str:
    """`interpreter`: `Interpreter.describe()`'s 'PATH (WHY)'."""
    return f"python: {interpreter}"


# ---- a target: PATH[::QUALNAME] ---------------------------------------------------------------------------

def no_file_given(command: str) -> str:
    return f"give a Python file, e.g. pycapsule {command} mod.py::my_function"


def not_a_file(path: str) -> str:
    return f"{path} is not a file"


def not_a_file_or_folder(path: str) -> str:
    return f"{path} is not a file or folder"


def folder_with_function(path: str, folder: Path, qualname: str) -> str:
    """`check FOLDER::QUALNAME`: a function is named in a file."""
    return f"{path} is a folder; name a function in one of its files, e.g. {folder / 'mod.py'}::{qualname}"


def cannot_read(path: str | Path, error: OSError) -> str:
    return f"{path} cannot be read: {error.strerror or error}"


def too_large(path: str, size: int, most: int) -> str:
    return f"{path} is {size >> 20} MiB, more than the {most >> 20} MiB a Python module may have here"


NUL_BYTE = "a NUL byte (Python source cannot contain one)"


def cannot_parse(error: Exception) -> str:
    """A parse that failed other than by a syntax error (nesting deeper than the parser goes)."""
    return f"the file cannot be parsed ({type(error).__name__}: {error})"


def syntax_error(path: Path, line: int, column: int | None, message: str) -> str:
    where = f"{path}:{line}" + (f":{column}" if column else "")
    return f"{where}: syntax error: {message}"


def no_backend(name: str, backends: Iterable[str]) -> str:
    return f"there is no sandbox backend named {name!r}; choose one of {', '.join(backends)}"


# ---- generate -------------------------------------------------------------------------------------------

INTERRUPTED = "interrupted"


def no_stubs(path: Path) -> str:
    return f"nothing to do: {path} has no stub functions."


def writing_preview(created: float) -> str:
    """`--write` after a run that showed its diff: that run's text, no model call."""
    return f"writing what the run of {_clock(created)} showed (the same file and settings: no model is asked)"


def preview_outdated(created: float) -> str:
    return (f"the file or the settings changed since the run of {_clock(created)} showed its diff: "
            "running again")


def _clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def unreadable_function(qualname: str, message: str) -> str:
    """The outcome of a target an earlier target's change made unreadable."""
    return f"{qualname}: {message}"


def function_at(qualname: str, label: str) -> str:
    """Where a progress line is: "f: attempt 2/5", or "f" (checking the current body: no label)."""
    return f"{qualname}: {label}" if label else qualname


def placed(where: str, what: str) -> str:
    """A progress line: what happened, after where (none for a notice)."""
    return f"{where}: {what}" if where else what


def outcome_line(outcome: Outcome, full: str) -> str:
    """The end of one function (`full`: `event_text.outcome_line`'s, with its time and tokens), except after
    a model or sandbox that cannot be used, whose one sentence is the whole story."""
    return f"{outcome.status}: {outcome.message}" if outcome.unavailable is not None else full


def result_line(qualname: str, status: str, message: str) -> str:
    """One function of an earlier run, as `--write` of its preview tells it."""
    return f"{qualname}: {status}: {message}"


def closest_try(name: str, closest: Closest, written: bool) -> str:
    where = "written (--write-closest)" if written else "not written; --write-closest writes it"
    return f"{name}: the closest try was attempt {closest.attempt}, still failing: {closest.failing}; {where}"


def next_step(name: str, outcome: Outcome, embedded: bool) -> str:
    """The one step most likely to help a function that gave up."""
    closest = outcome.closest
    if closest is not None and closest.near:
        more = max(2 * outcome.attempts, 4)
        hint = f"it came within one failure; `--max-attempts {more}` gives the model more tries"
    elif embedded:
        hint = ("the embedded model is small: a stronger one (OPENAI_BASE_URL and --model, any "
                "OpenAI-compatible endpoint) solves more functions like this")
    else:
        hint = "an example in the docstring that pins the failing case is what helps the model most"
    return f"{name}: next: {hint}"


def suggested_examples(qualname: str, doctests: Iterable[str]) -> list[str]:
    """The examples that would catch what a loosely pinned body's examples miss, as doctest lines to
    confirm (`doctests`: each example's)."""
    lines = [f"{qualname}: examples that would pin it down, with this body's own results "
             "(check each value; correct a wrong one and run again; --add-examples adds them):"]
    return lines + [f"    {line}" for doctest in doctests for line in doctest.splitlines()]


def not_written(path: Path, reason: object) -> str:
    return f"{path} was not written: {reason}"


def wrote(path: Path) -> str:
    return f"wrote {path}"


def what_was_kept(kind: str, kept: Sequence[str], left: Sequence[str], written: bool, write: bool) -> str:
    """One line: why the run ended early (`kind`: "interrupted", "model", "sandbox"), which bodies it kept and
    which functions are left undone."""
    why = "interrupted" if kind == "interrupted" else f"stopped: the {kind} cannot be used"
    if kept:
        where = "written" if written else "shown in the diff" if not write else "not written"
        why += f"; {where}: {', '.join(kept)}"
    if left:
        why += f"; {'not written' if write else 'not done'}: {', '.join(left)}"
    return why


def left_undone(qualname: str, under_way: bool, unavailable: str | None) -> str:
    """The message of a target the run did not finish: under way when interrupted (`unavailable` None), or
    not run (after an interruption, or once the model or the sandbox, `unavailable`, could not be used)."""
    why = "interrupted" if unavailable is None else f"the {unavailable} cannot be used"
    return f"{qualname}: {why}" if under_way else f"{qualname}: not run: {why}"


# ---- check ----------------------------------------------------------------------------------------------

def no_doctests(where: str) -> str:
    return f"no doctests found in {where}"


def not_checked(kind: str, message: str) -> str:
    """A file that could not be checked: its syntax error as it is, else ERROR and why."""
    return message if kind == "syntax" else f"ERROR {message}"


def stub(name: str, examples: int, path: str, qualname: str) -> str:
    return (f"STUB  {name} ({examples} examples; no body yet: "
            f"pycapsule generate {path}::{qualname} writes one)")


def cannot_run(name: str, failed: int, examples: int) -> str:
    return f"SKIP  {name}: {failed} of {examples} examples cannot run in the sandbox (not verified)"


def none_checks(name: str, examples: int) -> str:
    return f"SKIP  {name} ({examples} examples, none checks it: not verified)"


def no_examples(name: str) -> str:
    return f"SKIP  {name} (no examples: nothing verified)"


def more_failures(more: int, qualname: str, cannot_run: bool) -> str:
    what = "cannot run in the sandbox" if cannot_run else "failed"
    return f"  and {more} more example{'s' if more > 1 else ''} of {qualname} {what}"


def strength_lines(strength: Strength | None, loose: bool, asked: bool) -> list[str]:
    """`--strength`: what the examples and tests of a passing function make of its small changes."""
    if strength is None:
        return ["  strength: not measured (max_mutants = 0 turns it off)"] if asked else []
    survivors = f"; still passing: {strength.survivors_text()}" if strength.survivors else ""
    lines = [f"  strength: {'LOOSE: ' if loose else ''}{strength.describe()}{survivors}"]
    if strength.suggested:
        lines.append("  examples that would pin it down, with this body's own results (check each value):")
        lines += [f"    {line}" for example in strength.suggested for line in example.doctest().splitlines()]
    return lines


def tests_lines(tests: ProjectTests | None, ran: TestsRun | None) -> list[str]:
    """What check says of the project's tests: their result, or that they exist and how to run them."""
    if tests is None:
        return []
    files = ", ".join(tests.selection.files)
    if ran is None:
        count = len(tests.selection.node_ids)
        return [f"{count} project test(s) exercise this ({files}): add --tests to run them too"]
    if ran.problem is not None:
        return [f"project tests: {ran.problem}"]
    lines = [f"project tests ({files}): {ran.passed} passed, {ran.failed} failed"]
    lines += [f"FAIL {failure.test}: {' '.join(failure.crash.split())[:200]}" for failure in ran.failures]
    return lines


def summary_line(summary: dict[str, int], single: bool) -> str:
    """`N passed, N failed, N not verified, N stubs` (functions), the files in a run over several, and
    the files that could not be checked."""
    stubs = summary["stubs"]
    loosely = f" ({summary['passed_loosely']} loosely)" if summary["passed_loosely"] else ""
    line = (f"{summary['passed']} passed{loosely}, {summary['failed']} failed, "
            f"{summary['not_verified']} not verified, {stubs} stub{'' if stubs == 1 else 's'}")
    if not single:
        line += f" in {summary['files']} file{'' if summary['files'] == 1 else 's'}"
    broken = summary["files_not_checked"]
    if broken:
        line += f"; {broken} file{'' if broken == 1 else 's'} could not be checked"
    return line


# ---- config, sandbox, serve -------------------------------------------------------------------------------

def does_not_exist(path: Path) -> str:
    return f"{path} does not exist"


def settings_heading(start: Path, user_file: Path | None, found: bool, pyproject: Path | None, endpoint: str,
                     python: str) -> list[str]:
    """`config`'s lines above its table: where the settings come from."""
    return [
        f"settings for {start}",
        f"  your config file: {user_file}{'' if found else ' (not found)'}",
        f"  project file:     {pyproject or '(no pyproject.toml)'}",
        f"  model endpoint:   {endpoint}",
        f"  python:           {python}",
        "",
    ]


def image_loading(tag: str, cached: Path) -> str:
    return f"loading {tag} from {cached}"


def image_ready(tag: str, python: str) -> str:
    return f"{tag} is ready: it holds Python {python}"


def image_saved(tag: str, cached: Path) -> str:
    return f"saved {tag} to {cached}"


def image_built(tag: str, python: str) -> str:
    return f"built {tag}: it holds Python {python}"


def backend_works(name: str) -> str:
    return f"{name:18} works here"


def backend_unavailable(name: str, problem: str) -> str:
    return f"{name:18} unavailable: {problem}"


def doctor_line(what: str, said: str) -> str:
    """`sandbox doctor`'s other lines: 'bwrap limits', 'python'."""
    return f"{what:18} {said}"


def job_limit(kind: str, description: str) -> str:
    return f"{kind}: {description}"


SERVE_GREETING = ("pycapsule serve: this is a language server: it speaks LSP (JSON-RPC) on stdin/stdout and "
                  "is started by an editor, e.g. VS Code's pycapsule extension or Neovim with cmd = "
                  "{'pycapsule', 'serve'} (see docs/editors.md). Ctrl-C stops it.")
SERVE_STOPPED = "pycapsule serve: stopped"
