"""A pygls client announcing what an editor announces, driving `pycapsule serve` over stdio, and what
the server sends back (published diagnostics, each with an event to await the next publication)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient


class EditorSession:
    """A pygls client with the capabilities an editor announces, and what the server sends it."""

    def __init__(self) -> None:
        self.client = LanguageClient("pycapsule-measurements-lsp", "1")
        self.published: dict[str, asyncio.Event] = {}
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.ended: dict[str, asyncio.Event] = {}
        """Set when the run of that id has ended (its last `pycapsule/status` names its outcome)."""
        client = self.client

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.published.setdefault(params.uri, asyncio.Event()).set()

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        for quiet in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE, types.PROGRESS):
            client.feature(quiet)(lambda params: None)

        @client.feature("pycapsule/status")
        def status(params: Any) -> None:
            run_id, outcome = getattr(params, "runId", None), getattr(params, "outcome", None)
            if run_id is not None and outcome is not None:
                self._ended(str(run_id)).set()

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

    async def start(self, root: Path, env: dict[str, str], options: dict[str, Any]) -> None:
        await self.client.start_io(sys.executable, "-m", "pycapsule", "serve", env=env, cwd=str(root))
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=True),
            window=types.WindowClientCapabilities(work_done_progress=True),
            text_document=types.TextDocumentClientCapabilities(
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            ),
        )
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=root.as_uri(),
                process_id=os.getpid(),
                initialization_options={"pycapsule": options},
            )
        )
        self.client.initialized(types.InitializedParams())

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.published.setdefault(uri, asyncio.Event()).clear()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change_and_save(self, uri: str, path: Path, text: str, version: int) -> None:
        path.write_text(text, encoding="utf-8")
        self.published.setdefault(uri, asyncio.Event()).clear()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics_published(self, uri: str) -> float:
        started = time.perf_counter()
        await asyncio.wait_for(self.published.setdefault(uri, asyncio.Event()).wait(), 300)
        return time.perf_counter() - started

    def _ended(self, run_id: str) -> asyncio.Event:
        return self.ended.setdefault(run_id, asyncio.Event())

    async def run_ended(self, run_id: str, timeout: float = 60.0) -> None:
        await asyncio.wait_for(self._ended(run_id).wait(), timeout)

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 30)
            self.client.exit(None)
        finally:
            await self.client.stop()
