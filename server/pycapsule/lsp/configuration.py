"""The editor's settings, and the settings each document gets from them (see settings.py for the rule).

`Configuration` owns: the initializationOptions, the "pycapsule" section the editor answered for each
workspace folder, the settings resolved per project (cached until the editor's values or the project's
pyproject.toml change), the warnings already shown, and `ready`: set once `initialize` brought the
initializationOptions, cleared while the editor is asked (at most `_ASK_SECONDS`) so no run or doctest
check starts with stale settings. Nobody else keeps settings: engines, runs and doctest
checks ask it each time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.config import Settings, find_pyproject, project_root
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.lsp import wording
from pycapsule.lsp.documents import document_path
from pycapsule.lsp.protocol import SECTION
from pycapsule.lsp.settings import EditorOptions, Resolved, editor_values, resolve
from pycapsule.lsp.status import log, show

_ASK_SECONDS = 10.0
"""How long the editor may take to answer `workspace/configuration` before its earlier values are used."""

class Configuration:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._initialization: dict[str, Any] = {}
        self._folder_values: dict[str, dict[str, Any]] = {}
        """The editor's "pycapsule" section per workspace folder uri ("" when not scoped to a folder)."""
        self._resolved: dict[tuple[str, str, float], Resolved] = {}
        self._shown_warnings: set[str] = set()
        self._folder_uris: tuple[str, ...] = ()
        self._folder_paths: tuple[tuple[str, Path], ...] = ()
        self.ready = asyncio.Event()
        """Cleared while the editor's settings are being fetched."""

    # the editor's values -------------------------------------------------------------------------
    def initialize(self, initialization_options: Any) -> None:
        """`initialize`: the values the editor sent along; enough to work with until `initialized` has the
        editor's own settings fetched (a run may start before it, and must not wait for it)."""
        self._initialization = editor_values(initialization_options)
        self._changed()
        self.ready.set()

    async def reload(self, pushed: object = None) -> None:
        """Fetch the editor's settings for every workspace folder; clients that cannot be asked push
        their values instead (`pushed`, from didChangeConfiguration)."""
        self.ready.clear()
        try:
            if not await self._pull() and pushed is not None:
                self._folder_values = {"": editor_values(pushed)}
            self._changed()
        finally:
            self.ready.set()

    async def _pull(self) -> bool:
        """Ask the editor for the section, once unscoped and once per workspace folder; False when it
        cannot answer."""
        workspace = self._server.client_capabilities.workspace
        if not (workspace and workspace.configuration):
            return False
        scopes = ["", *(uri for uri, _ in self.folders())]
        items = [types.ConfigurationItem(section=SECTION, scope_uri=scope or None) for scope in scopes]
        try:
            answer = await asyncio.wait_for(
                self._server.workspace_configuration_async(types.ConfigurationParams(items=items)),
                _ASK_SECONDS,
            )
        except TimeoutError:
            log(self._server, wording.settings_late(_ASK_SECONDS), types.MessageType.Warning)
            return False
        except Exception as exc:
            log(self._server, wording.settings_failed(exc), types.MessageType.Warning)
            return False
        answer = list(answer or [])
        self._folder_values = {
            scope: editor_values(answer[i] if i < len(answer) else None) for i, scope in enumerate(scopes)
        }
        return True

    def _changed(self) -> None:
        """Settings are read again on next use (and shown for the root)."""
        self._resolved.clear()
        self.resolved(None)

    # where a document belongs ----------------------------------------------------------------------
    @property
    def root(self) -> Path | None:
        try:
            root = self._server.workspace.root_path
        except RuntimeError:  # before `initialize`
            return None
        return Path(root) if root else None

    def folders(self) -> tuple[tuple[str, Path], ...]:
        """The workspace folders as (uri, path), the deepest first."""
        try:
            uris = tuple(folder.uri for folder in self._server.workspace.folders.values())
        except RuntimeError:  # before `initialize`
            return ()
        if uris != self._folder_uris:  # worked out again only when the editor changes its folders
            paths = [(uri, document_path(uri)) for uri in uris]
            found = [(uri, path) for uri, path in paths if path is not None]
            self._folder_uris = uris
            self._folder_paths = tuple(sorted(found, key=lambda item: len(item[1].parts), reverse=True))
        return self._folder_paths

    def _folder_of(self, path: Path | None) -> tuple[str, Path | None]:
        """The workspace folder holding `path` (uri, path); ("", root) when none does."""
        if path is not None:
            for uri, folder in self.folders():
                if path == folder or folder in path.parents:
                    return uri, folder
        return "", self.root

    def project_of(self, uri: str | None) -> Path | None:
        """Where the CLI would look for the project of this file: `config.project_root` of its path
        (untitled buffers: of their workspace folder); None: the workspace root."""
        if uri is None:
            return self.root
        return project_root(self.project_anchor(uri))

    def project_anchor(self, uri: str) -> Path | None:
        """What `project_of` looks up from: the file's path, or its workspace folder when it has none.
        Costs no file-system access, so a run's start can leave the walk up to the engine's process."""
        path = document_path(uri)
        return path if path is not None else self._folder_of(None)[1]

    # what a document gets --------------------------------------------------------------------------
    def resolved(self, uri: str | None = None) -> Resolved:
        """Settings and editor options for a document (None: the workspace root)."""
        path = document_path(uri) if uri else None
        folder_uri, folder = self._folder_of(path)
        start = path if path is not None else folder
        pyproject = find_pyproject(start)
        try:
            stamp = pyproject.stat().st_mtime if pyproject else 0.0
        except OSError:
            stamp = -1.0
        key = (str(pyproject), folder_uri, stamp)
        found = self._resolved.get(key)
        if found is None:
            configuration = self._folder_values.get(folder_uri, self._folder_values.get("", {}))
            found = resolve(start, self._initialization, configuration)
            self._resolved[key] = found
            self._announce(found)
        return found

    def settings_for(self, uri: str | None = None) -> Settings:
        return self.resolved(uri).settings

    def options_for(self, uri: str | None = None) -> EditorOptions:
        return self.resolved(uri).options

    def endpoint_for(self, uri: str | None = None) -> str:
        """The model endpoint a document's settings use, in one short line (credentials masked), for
        status bars: see `models.which.endpoint_description`."""
        return endpoint_description(self.settings_for(uri))

    def _announce(self, resolved: Resolved) -> None:
        for warning in resolved.warnings:
            if warning not in self._shown_warnings:
                self._shown_warnings.add(warning)
                show(self._server, warning, types.MessageType.Warning)
        public = {k: v for k, v in resolved.settings.public().items() if k != "api_key_env"}
        where = resolved.loaded.pyproject or "no pyproject.toml"
        log(self._server, wording.settings_used(where, public, endpoint_description(resolved.settings)))
