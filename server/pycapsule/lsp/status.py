"""What the server tells the editor about itself: the `pycapsule/status` notification and log lines.

`pycapsule/status` params: {"state": "idle" | "generating" | "error", "attempt": int | None,
"maxAttempts": int | None, "name": str | None, "message": str, "running": int, "runId": str | None,
"outcome": str | None, "attempts": int | None, "endpoint": str | None}. Editors show it in a status
bar, and its `message` in notifications (so, like `show`'s, it holds no links: markup.py); `endpoint`
is the model endpoint the document's settings use (`models.which.endpoint_description`:
"embedded Qwen2.5-Coder 1.5B", "http://host:8080/v1 (model X)", credentials masked); `running` counts
the generations still going on. The last notification of a run carries its `runId` and its
`outcome` (the run's end status: passed, passed_loosely, not_verified, unconfirmed, gave_up, cancelled,
refused, error), with `attempts` and the end `message`: how a client learns how the run it started ended.
A run whose result passed but was not applied (the editor cannot apply edits or refused, the function
changed, no answer) also carries `code`: the new code, for the user to take.
`endpoint` names the model endpoint the workspace's settings use
(`models.which.endpoint_description`), for a status bar; the server also sends an idle/generating
status with it whenever the settings are (re)loaded.
"""

from __future__ import annotations

from typing import Literal

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.lsp.markup import no_links
from pycapsule.lsp.protocol import STATUS

State = Literal["idle", "generating", "error"]


def send_status(
    server: LanguageServer,
    state: State,
    message: str,
    *,
    name: str | None = None,
    attempt: int | None = None,
    max_attempts: int | None = None,
    running: int = 0,
    run_id: str | None = None,
    outcome: str | None = None,
    attempts: int | None = None,
    endpoint: str | None = None,
    code: str | None = None,
) -> None:
    server.protocol.notify(
        STATUS,
        {
            "state": state,
            "attempt": attempt,
            "maxAttempts": max_attempts,
            "name": name,
            "message": no_links(message),  # clients show it in notifications
            "running": running,
            "runId": run_id,
            "outcome": outcome,
            "attempts": attempts,
            "endpoint": endpoint,
            **({"code": code} if code else {}),
        },
    )


def log(server: LanguageServer, message: str, level: types.MessageType = types.MessageType.Info) -> None:
    """A line in the editor's output panel. Callers pass messages that never hold settings' secrets."""
    server.window_log_message(types.LogMessageParams(type=level, message=f"pycapsule: {message}"))


def show(server: LanguageServer, message: str, level: types.MessageType = types.MessageType.Info) -> None:
    server.window_show_message(types.ShowMessageParams(type=level, message=no_links(f"pycapsule: {message}")))
