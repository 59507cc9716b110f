"""Work-done progress for one run: created by the server, cancellable from the editor's progress UI.

Its texts name functions and quote failures, so they pass through `markup.no_links` (VS Code shows
them in a notification). Clients that cannot show server-initiated progress (no
`window.workDoneProgress` capability) get none of it; the `pycapsule/status` notification still
tells them what is going on.
"""

from __future__ import annotations

import uuid

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.lsp.markup import no_links


class RunProgress:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.token: str | None = None

    async def begin(self, title: str, message: str) -> None:
        window = self._server.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        token = f"pycapsule-{uuid.uuid4()}"
        try:
            await self._server.work_done_progress.create_async(token)
        except Exception:  # the client refused the token: carry on without a progress UI
            return
        self.token = token
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=no_links(title), message=no_links(message), cancellable=True,
                                        percentage=0),
        )

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self._server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=no_links(message), percentage=percentage)
            )

    def end(self, message: str) -> None:
        if self.token is not None:
            end = types.WorkDoneProgressEnd(message=no_links(message))
            self._server.work_done_progress.end(self.token, end)
            # pygls keeps a cancellation future per token forever; this run's is no longer needed.
            self._server.work_done_progress.tokens.pop(self.token, None)
