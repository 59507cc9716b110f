"""An editor for the tests: the real pytest-lsp client driving `pycapsule serve` in a subprocess,
plus the buffers an editor keeps (text + version), applying `workspace/applyEdit` the way VS Code
and Neovim do: refused when the edit's version is not the buffer's, else applied and announced
with `didChange`.

`Servers` keeps one such editor per client profile for a whole test module; each test gets it clean
(`start_test`): a folder of its own and nothing seen before it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pycapsule.lsp.positions import LineIndex
from pygls.workspace.position_codec import PositionCodec
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

EDITORS = ("visual-studio-code", "neovim")
API_KEY = "sk-test-SECRET-do-not-leak-4242"


class Editor:
    def __init__(self, client: LanguageClient, root: Path, profile: str) -> None:
        self.client = client
        self.root = root
        self.profile = profile
        """The client whose capabilities it declares: "visual-studio-code", "neovim", ..."""
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.statuses: list[dict[str, Any]] = []
        self.codec = PositionCodec()
        """Positions in the encoding the server chose (UTF-16 for VS Code, UTF-8 for Neovim)."""
        self.before_apply: Callable[[], None] | None = None
        """Runs when an edit arrives, before it is applied: to type 'while it is in flight'."""

        self.closing = asyncio.Event()
        """Set when the test ends: handlers that hold an answer back let go (see `never_answer`)."""
        self.on_edit: Callable[[types.ApplyWorkspaceEditParams], Awaitable[Any]] | None = None
        """Replaces how this editor answers `workspace/applyEdit` (editors that misbehave)."""

        async def apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
            if self.on_edit is not None:
                return await self.on_edit(params)
            return self.apply_edit(params)

        self._status_seen = asyncio.Event()

        def status(params: Any) -> None:
            # pygls hands over unknown notifications' params as a namedtuple
            self.statuses.append(params if isinstance(params, dict) else params._asdict())
            self._status_seen.set()

        client.feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)
        client.feature("pycapsule/status")(status)

        self.exit_code: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        """The server process' exit status, once it has ended."""

        async def server_exit(process: asyncio.subprocess.Process) -> None:  # pygls' hook
            if not self.exit_code.done():
                self.exit_code.set_result(process.returncode)

        client.server_exit = server_exit  # type: ignore[method-assign]

    # one test after another on the same server ------------------------------------------------
    def start_test(self, root: Path) -> None:
        """A clean editor for the next test: its files in `root` (a new folder inside the server's
        project), and no message, log, status, edit or progress from earlier tests."""
        root.mkdir(parents=True)
        self.root = root
        self.applied.clear()
        self.statuses.clear()
        self.before_apply = self.on_edit = None
        self.closing = asyncio.Event()
        self.client.messages.clear()
        self.client.log_messages.clear()
        self.client.progress_reports.clear()

    async def end_test(self) -> None:
        """Let go of edits held unanswered and stop whatever runs the test left going."""
        self.closing.set()
        await self.execute(types.Command(title="", command="pycapsule.cancel"))

    # buffers -------------------------------------------------------------------------------
    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def open(self, name: str | Path, text: str) -> str:
        """Write the file (a name in the first folder, or a whole path) and open it."""
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def open_untitled(self, name: str, text: str) -> str:
        """A buffer that was never saved: no file, an `untitled:` uri as VS Code gives it."""
        uri = f"untitled:{name}"
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def text(self, uri: str) -> str:
        return self.texts[uri]

    def replace(self, uri: str, old: str, new: str) -> None:
        """The user types: the first `old` becomes `new` (sent as an incremental change)."""
        text = self.texts[uri]
        start = text.index(old)
        index = LineIndex(text, self.codec)
        change = types.TextDocumentContentChangePartial(range=index.range(start, start + len(old)), text=new)
        self._changed(uri, text[:start] + new + text[start + len(old) :], [change])

    def save(self, uri: str) -> None:
        Path(self._path(uri)).write_text(self.texts[uri], encoding="utf-8")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def _path(self, uri: str) -> str:
        return uri.removeprefix("file://")

    def _changed(self, uri: str, text: str, changes: list[Any]) -> None:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=changes,
            )
        )

    # what the server asks of the editor -------------------------------------------------------
    def apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        """As VS Code and Neovim do: refused when a version is stale, else applied and announced."""
        self.applied.append(params)
        if self.before_apply is not None:
            self.before_apply()
        unversioned = [
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=edits,
            )
            for uri, edits in (params.edit.changes or {}).items()
        ]
        for change in [*(params.edit.document_changes or []), *unversioned]:
            assert isinstance(change, types.TextDocumentEdit), change
            uri = change.text_document.uri
            version = change.text_document.version
            if version is not None and version != self.versions.get(uri):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the document changed")
            text = self.texts[uri]
            index = LineIndex(text, self.codec)
            spans = sorted(
                ((index.offset(e.range.start), index.offset(e.range.end), e.new_text) for e in change.edits),
                reverse=True,
            )
            for start, end, new_text in spans:
                text = text[:start] + new_text + text[end:]
            self._changed(uri, text, [types.TextDocumentContentChangeWholeDocument(text=text)])
        return types.ApplyWorkspaceEditResult(applied=True)

    async def never_answer(self) -> None:
        """For an `on_edit` handler: no answer while the test runs (pygls' client cannot stop while
        a request handler is pending, so it lets go when the editor stops)."""
        await self.closing.wait()

    # requests --------------------------------------------------------------------------------
    async def code_actions(
        self,
        uri: str,
        line0: int,
        diagnostics: list[types.Diagnostic] | None = None,
        only: list[str] | None = None,
    ):
        position = types.Position(line=line0, character=4)
        return await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=position, end=position),
                context=types.CodeActionContext(
                    diagnostics=diagnostics or [],
                    only=[types.CodeActionKind(kind) for kind in only] if only is not None else None,
                ),
            )
        )

    async def hover(self, uri: str, line0: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line0, character=character),
            )
        )

    async def execute(self, command: types.Command) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        )

    async def run(self, command: types.Command, timeout: float = 120) -> dict[str, Any]:
        """Execute a run command and wait for the run's end, as a client does: the command answers at
        once with the run's id, and the last `pycapsule/status` of that id says how it ended."""
        answer = await self.execute(command)
        if answer.get("status") != "started":
            return answer
        return await self.run_end(answer["runId"], timeout)

    async def run_end(self, run_id: str, timeout: float = 120) -> dict[str, Any]:
        status = await self.wait_for_status(
            lambda status: status.get("runId") == run_id and bool(status.get("outcome")), timeout
        )
        return {"status": status["outcome"], "message": status["message"], "attempts": status["attempts"],
                "runId": run_id}

    async def wait_for_status(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60
    ) -> dict[str, Any]:
        """The first `pycapsule/status` received so far or later that satisfies `predicate`."""

        async def wait() -> dict[str, Any]:
            while True:
                found = next((status for status in self.statuses if predicate(status)), None)
                if found is not None:
                    return found
                self._status_seen.clear()
                await self._status_seen.wait()

        return await asyncio.wait_for(wait(), timeout)

    async def diagnostics_for(
        self, uri: str, predicate: Callable[[list[types.Diagnostic]], bool], timeout: float = 90
    ):
        """Wait until the published diagnostics of `uri` satisfy `predicate`."""

        async def wait() -> list[types.Diagnostic]:
            while True:
                current = list(self.client.diagnostics.get(uri, []))
                if uri in self.client.diagnostics and predicate(current):
                    return current
                await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        return await asyncio.wait_for(wait(), timeout)

    async def wait_for_log(
        self, predicate: Callable[[str], bool], count: int = 1, timeout: float = 60
    ) -> list[str]:
        """The first `count` log lines received so far or later that satisfy `predicate`."""

        async def wait() -> list[str]:
            while len(found := [line for line in self.logs() if predicate(line)]) < count:
                await self.client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
            return found[:count]

        return await asyncio.wait_for(wait(), timeout)

    def messages(self) -> list[str]:
        return [m.message for m in self.client.messages]

    def logs(self) -> list[str]:
        return [m.message for m in self.client.log_messages]


def framed(message: dict[str, Any]) -> bytes:
    """A JSON-RPC message as it goes over stdio, with its Content-Length header."""
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def server_env(base_url: str, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYCAPSULE_"))}
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY=API_KEY,
        PYCAPSULE_MODEL="fake-coder",
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
    )
    env.update(extra)
    return env


async def start_editor(
    name: str,
    root: Path,
    env: dict[str, str],
    initialization_options: dict[str, Any] | None = None,
    configuration: dict[str, Any] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    folders: list[Path] | None = None,
) -> Editor:
    """`folders`: the workspace folders (default: `root` alone); the server runs in `root`."""
    client = make_test_lsp_client()
    _read_code_actions_like_editors_do(client)
    if configuration is not None:
        client.set_configuration(configuration, section="pycapsule")
    editor = Editor(client, root, name)
    await client.start_io(sys.executable, "-m", "pycapsule", "serve", "--stdio", env=env, cwd=str(root))
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities(name),
            root_uri=root.as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name) for folder in folders or [root]
            ],
            initialization_options=initialization_options,
        )
    )
    editor.codec = PositionCodec(result.capabilities.position_encoding or types.PositionEncodingKind.Utf16)
    return editor


def _read_code_actions_like_editors_do(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads every `CodeAction` that has a `command` as a bare `Command`;
    VS Code and Neovim tell them apart by whether `command` is a string, and so does this client."""
    converter = client.protocol._converter

    def structure(value: Any, _: type) -> types.Command | types.CodeAction:
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007


async def stop_editor(editor: Editor) -> None:
    editor.closing.set()
    try:
        await asyncio.wait_for(editor.client.shutdown_session(), 20)
    finally:
        await editor.client.stop()


class Servers:
    """A test module's servers, one per client profile, started when a test first asks for one."""

    def __init__(self, root: Path, env: dict[str, str], initialization_options: dict[str, Any]) -> None:
        self.root, self.env, self.options = root, env, initialization_options
        self._editors: dict[str, Editor] = {}
        self._tests = 0

    async def editor_for(
        self, test: str, profile: str, capabilities: types.ClientCapabilities | None = None
    ) -> Editor:
        """The profile's editor, clean for `test` (a name for its folder)."""
        editor = self._editors.get(profile)
        if editor is None:
            editor = await start_editor(profile, self.root, self.env, self.options, capabilities=capabilities)
            self._editors[profile] = editor
        self._tests += 1
        editor.start_test(self.root / f"t{self._tests:02d}_{test}")
        return editor

    async def stop(self) -> None:
        for editor in self._editors.values():
            await stop_editor(editor)
