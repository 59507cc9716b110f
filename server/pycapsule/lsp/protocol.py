"""The names editors, their settings and key bindings see: commands, code action titles and kinds, the
status notification, the diagnostics' source and code, the settings section, the edit annotation.

Changing one of these breaks users' key bindings and editors' configurations: see docs/server.md.
"""

from __future__ import annotations

from lsprotocol import types

CMD_GENERATE = "pycapsule.generate"
"""Fill a stub until its doctests pass: {"uri", "qualname"} or {"uri", "position"} (commands.py)."""
CMD_SELF_DEBUG = "pycapsule.selfDebug"
"""Debug the current body until its doctests pass; the same arguments."""
CMD_CANCEL = "pycapsule.cancel"
"""Stop matching runs: none (all), {"uri"[, "qualname"]} or {"runId"}."""
CMD_APPLY_CLOSEST = "pycapsule.applyClosest"
"""Apply the closest try of the last run that gave up on a function: {"uri", "qualname"}."""

STATUS = "pycapsule/status"
"""The notification that tells status bars what the server does and how each run ended (status.py)."""

SECTION = "pycapsule"
"""The settings section (`workspace/configuration`; also `{"pycapsule": {...}}` in initializationOptions)."""

DIAGNOSTIC_SOURCE = "pycapsule"
DIAGNOSTIC_CODE = "doctest-failed"
"""Clients that send our diagnostics back without their source (ALE) keep this code."""
CANNOT_RUN_CODE = "doctest-cannot-run"
"""A doctest that fails only for what the sandbox lacks (debugging/sandbox_lacks.py): no quick-fix."""
LOOSE_CODE = "loosely-pinned"
"""A function whose last run passed loosely: its examples and tests catch too few of its body's small changes
(pycapsule.strength). Information; its quick-fix adds the examples that would catch them."""

PREVIEW_ANNOTATION = "pycapsule-preview"
"""The change annotation of an edit that needs the user's confirmation (diffPreview)."""

GENERATE_TITLE = "Generate & self-debug"
GENERATE_KIND = types.CodeActionKind.RefactorRewrite
FIX_KIND = types.CodeActionKind.QuickFix


def fix_title(name: str) -> str:
    return f"Self-debug `{name}` (doctests failing)"


def closest_title(name: str, attempt: int) -> str:
    """The action that applies a run's closest try (a run never applies it by itself)."""
    return f"Apply the closest try of `{name}` (attempt {attempt}, still failing)"


def add_example_title(call: str, output: str) -> str:
    """The action that writes one suggested example into the docstring: 'Add example `late_fee(30)` → 10.0'
    (an exception as its last line, a long output cut short)."""
    lines = output.split("\n")
    shown = lines[-1] if output.startswith("Traceback (most recent call last)") else " ⏎ ".join(lines)
    return f"Add example `{_cut(call)}` → {_cut(shown) if output else '(shows nothing)'}"


def add_examples_title(count: int) -> str:
    return f"Add {count} suggested examples"


def _cut(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def cancel_title(mode: str, name: str) -> str:
    return f"Cancel {'generating' if mode == 'generate' else 'self-debugging'} `{name}`"


def run_title(mode: str, name: str) -> str:
    """A run's progress title and the answer of the command that started it."""
    return f"{'Generating' if mode == 'generate' else 'Self-debugging'} `{name}`"


def action_kind(mode: str) -> types.CodeActionKind:
    """The kind of the action that starts a run of `mode` (and of the action that cancels it)."""
    return GENERATE_KIND if mode == "generate" else FIX_KIND
