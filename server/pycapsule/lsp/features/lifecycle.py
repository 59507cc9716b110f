"""Session and document events: settings at start and on change (per workspace folder), diagnostics
on open and save, edits seen (for runs waiting on their edit, and the loosely pinned functions' diagnostics),
progress cancellation, shutdown."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.lsp import wording
from pycapsule.lsp.services import Services
from pycapsule.lsp.status import send_status
from pycapsule.lsp.text_documents import use_lsp_lines


def register(server: LanguageServer, services: Services) -> None:
    configuration, diagnostics = services.configuration, services.diagnostics

    async def reload(pushed: object = None) -> None:
        await configuration.reload(pushed)
        # The status bar's endpoint follows the (re)loaded settings.
        running = services.runs.count
        state = "generating" if running else "idle"
        send_status(server, state, wording.READY, running=running, endpoint=configuration.endpoint_for())

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        use_lsp_lines(server.workspace)
        configuration.initialize(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        await reload()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(params: types.DidChangeConfigurationParams) -> None:
        services.read_ahead.stop()  # read again, if at all, with the new settings' engine
        await reload(pushed=params.settings)
        for uri in list(server.workspace.text_documents):
            if configuration.settings_for(uri).diagnostics:
                diagnostics.schedule(uri)  # cached functions cost nothing; newly enabled ones run
            else:
                diagnostics.clear(uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(params: types.DidChangeWorkspaceFoldersParams) -> None:
        await reload()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document):
            diagnostics.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        services.changes.changed(params.text_document.uri)
        services.read_ahead.changed(params.text_document.uri)
        diagnostics.edited(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in server.workspace.text_documents:
            diagnostics.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        services.documents.forget(params.text_document.uri)
        diagnostics.forget(params.text_document.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancelled(params: types.WorkDoneProgressCancelParams) -> None:
        services.runs.cancel_progress(params.token)

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        services.close()
        # pygls then cancels every pending request while iterating the live dict, and a cancelled
        # request to the editor (a run's edit) removes itself from it: cancel them first, from a copy.
        current = server.protocol.msg_id
        for msg_id, future in list(server.protocol._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()


def _is_python(document: types.TextDocumentItem) -> bool:
    return document.language_id == "python" or document.uri.endswith((".py", ".pyi"))
