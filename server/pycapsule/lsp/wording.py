"""Every sentence the language server composes for the user: run messages (window/showMessage, logMessage,
progress, `pycapsule/status`, command answers), the ends of an edit, refusals, diagnostics, hover text and
settings warnings. What the loop's events and a run's outcome say is the shared core's
(`pycapsule.event_text`, `pycapsule.outcome_text`), used here as it is; code action titles and command names
are interfaces and stay in protocol.py.

The functions take typed values and return the text; the callers only place it. Nothing here imports another
module of the server (protocol.py's names aside), so that every one of them can use it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal, Protocol

from lsprotocol import types

from pycapsule import event_text
from pycapsule.lsp.protocol import CMD_SELF_DEBUG, closest_title

if TYPE_CHECKING:
    from pycapsule.events import Closest, Outcome
    from pycapsule.history import AttemptRecord
    from pycapsule.strength.check import Strength


READY = "Ready."
"""The status once the settings are (re)loaded."""


# ---- a run: its start, its end, the closest try ------------------------------------------------------------

STARTING = "starting"
"""A run's first progress message, before its first event."""
UNRESOLVED = "the engine's process ended the run unresolved"
"""Why no run started when the engine's process ended it before naming its function."""
CANCELLED = "cancelled"
NO_OUTCOME = "the loop ended without an outcome"


def engine_gone(error: Exception | None = None) -> str:
    """Why the runs and checks under way ended: the engine's process stopped (`error`: sending to it
    failed)."""
    gone = "the engine's process stopped"
    return f"{gone}: {error}" if error is not None else gone


def nothing_started(why: str) -> str:
    """A run command's answer (and an error message) when the engine's process did not resolve the target."""
    return f"nothing was started: {why}; try again."


def busy(name: str) -> str:
    """A run command's answer (and a warning) while a run works on the function."""
    return f"`{name}` is already being worked on; cancel that run first."


def started_without_progress(title: str) -> str:
    """A run's start, for a client that has no progress UI to show and cancel it."""
    return f"{title}… (to stop it: the code action on it again)"


def attempt_logged(name: str, attempt: int, said: str, seconds: float) -> str:
    """The log line of an attempt's end (`said`: `event_text.describe`'s)."""
    return f"`{name}` attempt {attempt}: {said} ({seconds:.1f} s)"


def internal_error_logged(name: str, error: Exception) -> str:
    return f"`{name}`: internal error: {error!r}"


def internal_error(name: str, error: Exception) -> str:
    """The end of a run that a bug of the server's stopped."""
    return f"`{name}`: internal error ({error})"


def gone(name: str, reason: str) -> str:
    """The end of a run whose engine's process died."""
    return f"`{name}`: {reason} (killed or crashed); run it again."


def failed(error: BaseException) -> str:
    """A run that failed in the engine's process, as the host reports it (`loop_stopped`'s reason)."""
    return f"{type(error).__name__}: {error}"


def loop_stopped(reason: str) -> str:
    """The end of a run that failed in the engine's process."""
    return f"the loop stopped: {reason}"


def not_applied_logged(name: str, reason: str, code: str) -> str:
    """The log's copy of a result that was not applied, for the user to take."""
    return f"`{name}`: the new code, not applied ({reason}):\n{code}"


def run_end(name: str, outcome: Outcome, strength_kept: bool, closest: Closest | None) -> str:
    """A run's last message: the outcome (`event_text.run_summary`), what it found of the result's strength
    when that is kept, and the code action that applies its closest try when one is offered."""
    summary = event_text.run_summary(name, outcome)
    if strength_kept and outcome.strength is not None:
        summary += _strength_note(name, outcome.status, outcome.strength)
    if closest is not None:
        summary += (f"; its closest try (attempt {closest.attempt}: {closest.failing}) is offered as the "
                    f"code action \"{closest_title(name, closest.attempt)}\"")
    return summary


def _strength_note(name: str, status: str, strength: Strength) -> str:
    """What the end message adds of the strength kept: the counts (a passed run's summary lacks them) and the
    code actions that add the suggested examples."""
    note = f"; {strength.describe()}" if status == "passed" else ""
    if strength.suggested:
        note += f"; code actions on `{name}` add examples that would catch more of its small changes"
    return note


def no_closest(qualname: str) -> str:
    return f"there is no closest try of `{qualname}` to apply"


def closest_busy(name: str) -> str:
    return f"`{name}` is being worked on; cancel that run first"


def closest_applied(name: str, attempt: int) -> str:
    return f"`{name}`: applied its closest try (attempt {attempt}), which still fails"


_LEVELS = {
    "passed": types.MessageType.Info,
    "passed_loosely": types.MessageType.Warning,
    "not_verified": types.MessageType.Info,
    "cancelled": types.MessageType.Info,
    "error": types.MessageType.Error,
}


def level(status: str) -> types.MessageType:
    """How loud a run's end is (a warning for every status not listed): only Info ends may go to the log."""
    return _LEVELS.get(status, types.MessageType.Warning)


# ---- refusals: why no run starts ---------------------------------------------------------------------------

def refused(kind: Literal["syntax", "target"], reason: str) -> str:
    """A refusal as the start command's answer (`reason`: the end of a sentence)."""
    if kind == "syntax":
        return _full_stop(f"nothing was started: {reason}")
    return _full_stop(reason[:1].upper() + reason[1:])


def refused_run(title: str, reason: str) -> str:
    """A refusal that ends a run already under way for the editor (`title`: `run_title`'s)."""
    return _full_stop(f"{title} did not start: {reason}")


def _full_stop(sentence: str) -> str:
    return sentence if sentence.endswith((".", "?", "!")) else sentence + "."


def has_a_body(name: str) -> str:
    return f"`{name}` already has a body; use {CMD_SELF_DEBUG} to debug it"


def does_not_parse(reason: str) -> str:
    return f"the file does not parse ({reason}); fix that first"


def no_function_named(qualname: str, uri: str) -> str:
    return f"there is no function `{qualname}` in {uri}"


def no_function_at(line0: int, uri: str) -> str:
    return f"there is no function at {_line_of(line0, uri)}"


def not_a_function_at(qualname: str, line0: int, uri: str) -> str:
    return f"`{qualname}` is not a function at {_line_of(line0, uri)}"


def _line_of(line0: int, uri: str) -> str:
    return f"line {line0 + 1} of {uri}"


# ---- a command's arguments ---------------------------------------------------------------------------------

NEEDS_QUALNAME = 'The command needs {"uri": ..., "qualname": ...}.'
EXPECTED_TARGET = 'Expected {"uri": ..., "qualname": ...} or {"uri": ..., "position": {"line", "character"}}.'
NEEDS_URI = 'The command needs the document\'s "uri" as a string.'
NEEDS_POSITION = 'The command needs a "qualname" or a "position" {"line", "character"}.'


def unreadable(uri: str, error: Exception) -> str:
    return f"{uri} cannot be read: {error}"


def examples_outdated(qualname: object) -> str:
    """An "Add example" action resolved after its function changed."""
    return f"`{qualname}` changed since the examples were suggested: none was added."


# ---- the edit at a run's end (apply.py) --------------------------------------------------------------------

SENDING_ANYWAY = "the editor says it cannot apply edits; sending the edit anyway (many apply it)"
NOT_APPLIED = "the editor did not apply the edit"
APPLIED_BUT_MISSING = "the editor answered that it applied the edit, but its text does not have it"
CANNOT_APPLY = "the editor cannot apply edits; the new code was shown in a message"
PREVIEW_DESCRIPTION = "Generated by the model and checked against its doctests."


def edit_label(name: str, label: str | None) -> str:
    """The `workspace/applyEdit` label: `label` (the closest try's action), else the run's."""
    return f"pycapsule: {label or f'generate `{name}`'}"


def preview_label(name: str, label: str | None) -> str:
    """The change annotation of a previewed edit."""
    return f"pycapsule: {label or f'new body of `{name}`'}"


def editor_refused(error: Exception) -> str:
    """An error reply to the edit, as the reason it was not applied."""
    return f"the editor refused the edit ({error})"


def offered(reason: str, offers: int, seconds: float) -> str:
    """The last refusal's reason, once the edit was offered as often or as long as it may be."""
    return f"{reason} (offered {offers} times, each on the newest text, for {seconds:.0f} s)"


def not_changed(name: str, reason: str) -> str:
    return f"`{name}` was not changed: {reason} (the new code is in the server's log)."


def changed_meanwhile(name: str, conflict: str) -> str:
    """The user changed the function during the run (`conflict`: `changed_during_run`'s)."""
    return (f"`{name}` was not changed: {conflict}. "
            "Your text is untouched; run it again to regenerate (the new code is in the server's log).")


def changed_during_run(function: bool, first_line: int, last_line: int) -> str:
    """Why a run's edit cannot move onto the editor's text: the user changed the function (`function`) or the
    text an edit replaces, lines `first_line`-`last_line` (1-based)."""
    what = "the function" if function else "the text the edit replaces"
    return f"{what} (lines {first_line}-{last_line}) changed while the run was going on"


def silent(seconds: float) -> str:
    return f"the editor did not answer the edit within {seconds:g} s"


def unconfirmed(name: str, silence: str) -> str:
    """Neither an answer nor the edit's text in time (`silence`: `silent`'s)."""
    return (f"`{name}`: {silence}; check whether the function was changed "
            "(the new code is in the server's log).")


def take_the_code(name: str, code: str) -> str:
    """An editor that cannot apply edits: the new code, for the user to put in place."""
    return (f"`{name}`: this editor cannot apply edits, so your text is unchanged. "
            f"The new code, to put in place of `{name}` (also in the server's log):\n{code}")


# ---- doctest diagnostics -----------------------------------------------------------------------------------

IN_THE_DOCUMENTATION = "the example, in the project's documentation"
RAISED_HERE = "raised here"


def cannot_read_doctests(error: str) -> str:
    return f"doctests cannot be read: {error}"


def doctest_failed(failure: str) -> str:
    return f"doctest failed: {failure}"


def doctest_raised(error_type: str, message: str) -> str:
    return f"doctest failed: {error_type}: {message}"


def doctest_got(expected: str, got: str) -> str:
    return f"doctest failed: expected {expected}, got {got}"


def cannot_run_in_sandbox(why: str) -> str:
    return f"doctest cannot run in the sandbox: it {why}"


def in_the_documentation(document: str, line: int, message: str) -> str:
    """A documentation example's finding, on the def line ('docs/x.md:12 (the project's documentation):
    ...')."""
    return f"{document}:{line} (the project's documentation): {message}"


def module_raised(error_type: str, message: str) -> str:
    return f"the module raised {error_type}: {message}; no doctest ran"


def did_not_finish(detail: str) -> str:
    return f"doctests did not finish: {detail}"


def loosely_pinned(name: str, strength: Strength, first_survivor: str | None) -> str:
    """The loosely-pinned diagnostic: what the examples and tests miss, with the first change they let
    pass."""
    text = f"{name}: its examples and tests do not pin the body down: {strength.describe()}"
    if first_survivor is not None:
        text += f"; e.g. {first_survivor} still passes"
    return text


def check_stopped(name: str) -> str:
    return f"doctests of {name}: stopped for a newer save, nothing published"


def check_failed(uri: str, error: Exception) -> str:
    return f"doctest diagnostics failed for {uri}: {error}"


def checked(name: str, ran: int, cached: int, problems: int) -> str:
    return (f"doctests of {name}: ran {ran} function{'' if ran == 1 else 's'}, {cached} cached, "
            f"{problems} problem{'' if problems == 1 else 's'}")


# ---- settings ----------------------------------------------------------------------------------------------

def settings_late(seconds: float) -> str:
    return f"the editor did not send its settings within {seconds:g} s; using the ones it sent"


def settings_failed(error: Exception) -> str:
    return f"the editor did not send its settings: {error}"


def settings_used(where: str, public: dict[str, object], endpoint: str) -> str:
    """The log line of the settings a project's documents get."""
    return f"settings ({where}): {public}; model: {endpoint}"


def diff_preview_not_bool(default: bool) -> str:
    return f"Setting 'diffPreview' must be true or false; using {str(default).lower()}."


def apply_edit_timeout_out_of_range(default: float) -> str:
    return f"Setting 'applyEditTimeout' must be a number of seconds in (0, 3600]; using {default:g}."


def api_key_ignored(key: str, source: str) -> str:
    return (f"Setting '{key}' in {source} is ignored: put the key in the environment variable "
            "that 'apiKeyEnv' names.")


# ---- hover -------------------------------------------------------------------------------------------------

class Marks(Protocol):
    """How hover marks up what it quotes: Markdown, or plain text for clients that cannot render it."""

    def strong(self, text: str) -> str: ...

    def code(self, text: str) -> str: ...

    def prose(self, text: str) -> str: ...


SUGGESTED_EXAMPLES = "Examples that would catch them (what this body shows; check before adding):"


def history_title(name: str, marks: Marks) -> str:
    return f"{marks.strong('pycapsule: attempts at')} {marks.code(name)} (newest first)"


def history_entry(record: AttemptRecord, marks: Marks) -> str:
    """One attempt: '- 2025-06-01 10:00:00 · `fake-coder` · **passed, not applied** (attempt 2, fix) ·
    310 tokens · 1.2 s'."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
    tokens = record.prompt_tokens + record.completion_tokens
    seconds = record.model_seconds + record.check_seconds
    not_applied, _ = record.not_applied
    verdict = f"{record.verdict}, {not_applied}" if not_applied else record.verdict
    return (f"- {when} · {marks.code(record.model)} · {marks.strong(verdict)}"
            f" (attempt {record.attempt}, {marks.prose(record.mode)}) · {tokens} tokens · {seconds:.1f} s")


def history_notes(record: AttemptRecord, marks: Marks) -> list[str]:
    """What goes under an attempt's line: why its result was not applied, what verified it, and a failure's
    first error line."""
    _, why = record.not_applied
    notes = [marks.prose(text) for text in (why, record.verified) if text]
    if record.first_error_line and record.verdict != "passed":
        notes.append(marks.code(record.first_error_line))
    return notes


def strength_heading(strength: Strength, loosely: bool) -> str:
    return "pycapsule: " + ("its examples and tests do not pin the body down" if loosely
                           else "changes of the body its examples and tests do not catch"
                           if strength.survivors else "inputs its annotations admit that it raises on"
                           if strength.raised_on else "another body that passes them disagrees")


def strength_found(strength: Strength, survivors: str) -> str:
    """The counts and the changes that still pass (`survivors`: at the function's lines now)."""
    said = strength.describe()
    if strength.survivors:
        said += f"; still passing: {survivors}"
    return said
