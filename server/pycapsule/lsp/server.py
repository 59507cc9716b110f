"""The language server object: state shared by the features, and the one place they are registered.

Features live in their own modules (actions, commands, diagnostics, hover, lifecycle); this module
holds the engine (created on first use, rebuilt when the settings change), the parsed documents
and the settings, and hooks `$/cancelRequest` so it can stop a generation.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from pycapsule import __version__
from pycapsule.config import DEFAULTS, Settings
from pycapsule.lsp.diagnostics import DoctestDiagnostics
from pycapsule.lsp.documents import DocumentCache, ParsedDocument, document_path
from pycapsule.lsp.runs import Runs
from pycapsule.lsp.status import log, show


class PycapsuleProtocol(LanguageServerProtocol):
    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # pygls only cancels the request's future; the generation runs on in its thread unless told.
        server = self._server
        if isinstance(server, PycapsuleServer):
            server.runs.cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)


class PycapsuleServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("pycapsule", __version__, protocol_cls=PycapsuleProtocol)
        self.settings: Settings = DEFAULTS
        self.initialization: dict[str, Any] = {}
        self.configuration: dict[str, Any] = {}
        self.documents = DocumentCache()
        self.runs = Runs(self)
        self.diagnostics = DoctestDiagnostics(self)
        self._shown_warnings: set[str] = set()
        self._engine: Any = None
        self._engine_settings: Settings | None = None
        self._engine_lock = asyncio.Lock()
        self._retired: list[Any] = []
        self.settings_ready = asyncio.Event()
        """Cleared while the editor's settings are being fetched, so no run starts with stale ones."""

    @property
    def root(self) -> Path | None:
        try:
            root = self.workspace.root_path
        except RuntimeError:  # before `initialize`
            return None
        return Path(root) if root else None

    def parsed(self, uri: str) -> ParsedDocument:
        return self.documents.parse(self.workspace.get_text_document(uri), self.workspace.position_codec)

    def parsed_near(self, uri: str, line0: int) -> ParsedDocument:
        """Enough of the document to answer a request at `line0` quickly (see DocumentCache.near)."""
        return self.documents.near(
            self.workspace.get_text_document(uri), self.workspace.position_codec, line0
        )

    def apply_settings(self) -> None:
        from pycapsule.lsp.settings import resolve

        loaded = resolve(self.root, self.initialization, self.configuration)
        for warning in loaded.warnings:
            if warning not in self._shown_warnings:
                self._shown_warnings.add(warning)
                show(self, warning, types.MessageType.Warning)
        self.settings = loaded.settings
        public = {k: v for k, v in loaded.settings.public().items() if k != "api_key_env"}
        log(self, f"settings: {public}")

    async def engine(self) -> Any:
        """The engine for the current settings, created off the event loop (it warms a sandbox)."""
        await self.settings_ready.wait()
        async with self._engine_lock:
            if self._engine is None or self._engine_settings != self.settings:
                if self._engine is not None:
                    # Runs still using the old engine keep it; it is closed at shutdown.
                    self._retired.append(self._engine)
                settings = self.settings
                self._engine = await asyncio.get_running_loop().run_in_executor(
                    None, _make_engine, settings, self.root
                )
                self._engine_settings = settings
            return self._engine

    def close_retired_engines(self) -> None:
        """Engines replaced by a settings change, closed once no run or doctest check can use them."""
        if self._retired and self.runs.count <= 1 and not self.diagnostics.busy:
            retired, self._retired = self._retired, []
            for engine in retired:
                threading.Thread(target=_close_quietly, args=(engine,), daemon=True).start()

    def close(self) -> None:
        self.runs.shutdown()
        self.diagnostics.shutdown()
        for engine in [*self._retired, self._engine]:
            if engine is not None:
                threading.Thread(target=_close_quietly, args=(engine,), daemon=True).start()
        self._retired, self._engine = [], None


def _make_engine(settings: Settings, root: Path | None) -> Any:
    from pycapsule.engine import Engine

    return Engine(settings, project_root=root)


def _close_quietly(engine: Any) -> None:
    with contextlib.suppress(Exception):  # closing at exit: nobody is left to tell
        engine.close()


def document_root(server: PycapsuleServer, uri: str) -> Path | None:
    path = document_path(uri)
    return server.root or (path.parent if path else None)


def build_server() -> PycapsuleServer:
    from pycapsule.lsp import actions, commands, hover, lifecycle

    server = PycapsuleServer()
    for feature in (lifecycle, actions, commands, hover):
        feature.register(server)
    return server
