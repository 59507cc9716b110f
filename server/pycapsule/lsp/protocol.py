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


def cancel_title(mode: str, name: str) -> str:
    return f"Cancel {'generating' if mode == 'generate' else 'self-debugging'} `{name}`"


def run_title(mode: str, name: str) -> str:
    """A run's progress title and the answer of the command that started it."""
    return f"{'Generating' if mode == 'generate' else 'Self-debugging'} `{name}`"


def action_kind(mode: str) -> types.CodeActionKind:
    """The kind of the action that starts a run of `mode` (and of the action that cancels it)."""
    return GENERATE_KIND if mode == "generate" else FIX_KIND
