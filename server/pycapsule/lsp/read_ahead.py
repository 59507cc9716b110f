"""Reading a stub's first request ahead while the user pauses on it (issue 48, item 2).

When the editor asks for code actions on a stub (its cursor is there) and "Generate & self-debug" is
offered, `ReadAhead.offer` waits until the document has not changed for `PAUSE` seconds, then asks the
engine's process to read the stub's first request into the embedded model's cache (`Engine.read_ahead`:
only when the model already runs for this editor, and only in the batches a fresh read makes, so the answer
is the same). A run started on the stub then writes its first token that much sooner.

The next change to the document, an offer for another stub, a change of settings and shutdown abandon it;
the model's client also gives way to any real request between two batches. One read-ahead at a time.
"""

from __future__ import annotations

import asyncio
import logging

from pygls.lsp.server import LanguageServer

from pycapsule.lsp.changes import ChangeSignal
from pycapsule.lsp.configuration import Configuration
from pycapsule.lsp.documents import document_path
from pycapsule.lsp.engine_process import EngineProcess
from pycapsule.lsp.host_messages import StartRequest
from pycapsule.lsp.remote import Failed, Gone, RemoteRun

log = logging.getLogger(__name__)

PAUSE = 1.0
"""Seconds without a change to the document before its stub's prompt is read ahead."""

Target = tuple[str, str, int | None]
"""(uri, qualname, the document's version)."""


class ReadAhead:
    def __init__(self, server: LanguageServer, configuration: Configuration, engine_process: EngineProcess,
                 changes: ChangeSignal) -> None:
        self._server = server
        self._configuration = configuration
        self._engine_process = engine_process
        self._changes = changes
        self._target: Target | None = None
        """What is waiting, being read or was read last (offered again: nothing to do)."""
        self._task: asyncio.Task[None] | None = None
        self._remote: RemoteRun | None = None

    def offer(self, uri: str, qualname: str, version: int | None) -> None:
        """The stub is under the user's cursor: read its first request once the user pauses."""
        target = (uri, qualname, version)
        if target == self._target:
            return
        self.stop()
        self._target = target
        self._task = asyncio.get_running_loop().create_task(self._read(target))

    def changed(self, uri: str) -> None:
        """The document changed: what was read ahead for it may no longer be its stub's prompt."""
        if self._target is not None and self._target[0] == uri:
            self.stop()

    def stop(self) -> None:
        task, remote = self._task, self._remote
        self._target = self._task = self._remote = None
        if task is not None:
            task.cancel()
        if remote is not None:
            remote.cancel()

    async def _read(self, target: Target) -> None:
        uri, qualname, version = target
        await self._configuration.ready.wait()
        settings = self._configuration.settings_for(uri)
        if not (settings.read_ahead and settings.uses_embedded_model):
            return
        if await self._changes.wait(uri, PAUSE):
            return  # `changed` has stopped this task already; this line is for a change it missed
        try:
            document = self._server.workspace.get_text_document(uri)
            text = document.source
        except (OSError, UnicodeDecodeError):
            return
        if document.version != version:
            return
        request = StartRequest(uri=uri, path=document_path(uri), text=text, qualname=qualname, line=None,
                               mode="read_ahead", settings=settings,
                               project_anchor=self._configuration.project_anchor(uri))
        self._remote = self._engine_process.start(request)
        self._remote.go()  # a refusal (no such stub any more) ends in the host at once
        news = await self._remote.next()
        if isinstance(news, Failed | Gone):
            log.info("pycapsule: no read-ahead: %s", news.reason)
