"""Session and document events: settings at start and on change, diagnostics on open and save,
progress cancellation, shutdown."""

from __future__ import annotations

from lsprotocol import types

from pycapsule.lsp.server import PycapsuleServer
from pycapsule.lsp.settings import SECTION, editor_values
from pycapsule.lsp.status import log


def register(server: PycapsuleServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: PycapsuleServer, params: types.InitializeParams) -> None:
        ls.initialization = editor_values(params.initialization_options)
        ls.apply_settings()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PycapsuleServer, params: types.InitializedParams) -> None:
        ls.settings_ready.clear()
        try:
            await _pull_configuration(ls)
        finally:
            ls.settings_ready.set()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: PycapsuleServer, params: types.DidChangeConfigurationParams) -> None:
        ls.settings_ready.clear()
        try:
            if not await _pull_configuration(ls):
                # Clients without `workspace/configuration` push the values instead.
                ls.configuration = editor_values(params.settings)
                ls.apply_settings()
        finally:
            ls.settings_ready.set()
        for uri in list(ls.workspace.text_documents):
            if ls.settings.diagnostics:
                ls.diagnostics.schedule(uri)  # cached functions cost nothing; newly enabled ones run
            else:
                ls.diagnostics.clear(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PycapsuleServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document):
            ls.diagnostics.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PycapsuleServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in ls.workspace.text_documents:
            ls.diagnostics.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PycapsuleServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.forget(params.text_document.uri)
        ls.diagnostics.forget(params.text_document.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancelled(ls: PycapsuleServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.runs.cancel_progress(params.token)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PycapsuleServer, params: None) -> None:
        ls.close()


def _is_python(document: types.TextDocumentItem) -> bool:
    return document.language_id == "python" or document.uri.endswith((".py", ".pyi"))


async def _pull_configuration(ls: PycapsuleServer) -> bool:
    """Ask the editor for the "pycapsule" section; False when it cannot answer."""
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return False
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception as exc:
        log(ls, f"the editor did not send its settings: {exc}", types.MessageType.Warning)
        return False
    ls.configuration = editor_values(answer[0] if answer else None)
    ls.apply_settings()
    return True
