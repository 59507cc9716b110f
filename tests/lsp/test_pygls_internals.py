"""The pygls internals the server relies on: one test per reliance, named for the module that relies on it.

pygls does not promise these (private names, or details of how its public methods work), so an upgrade may
change one without a word; the server would then fail in an editor's hands, far from the cause. These tests
check each reliance on pygls itself, without a server process, so that an upgrade fails here first, saying
which. pyproject.toml pins pygls and lsprotocol exactly, and the first test holds the installed versions to
the pins: an upgrade is a deliberate step, the pin moved in pyproject.toml, that runs these tests.

- lsp/stdio.py reads stdin in the event loop: it calls `pygls.io_.run_async` with a reader of its own (which
  answers b"" at the end and a header pygls skips for a too-long line) and a `StdoutWriter`, and sets the
  server's `_stop_event`, as pygls's own `start_io` does, since `shutdown` sets that event to end the read
  loop;
- lsp/server.py answers requests before `initialize` by overriding the protocol's `_handle_request` and
  `_handle_notification`, and answers with `_send_response`;
- lsp/text_documents.py makes the workspace's documents split lines by the LSP's rule: in the `initialize`
  handler it wraps the workspace's `_create_text_document` and swaps each document's class for
  `LspTextDocument`, which overrides `lines` only;
- lsp/features/lifecycle.py cancels the pending requests to the editor from `protocol._request_futures`
  before pygls's own shutdown does;
- lsp/progress.py drops a finished token's future from `work_done_progress.tokens`;
- lsp/positions.py (and documents.py, engine_host.py, doctest_check.py) imports `PositionCodec` from
  `pygls.workspace.position_codec` and counts code units with its `impl`.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import threading
import tomllib
from concurrent.futures import Future
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pycapsule.lsp.stdio import _DROPPED_LINE
from pycapsule.lsp.text_documents import LspTextDocument, use_lsp_lines
from pygls import io_
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
URI = "file:///m.py"


def _pinned(package: str) -> str:
    requirements = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    return next(requirement.split("==")[1] for requirement in requirements
                if requirement.startswith(f"{package}=="))


def _parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _server(protocol_cls: type[LanguageServerProtocol] = LanguageServerProtocol) -> tuple[LanguageServer,
                                                                                         io.BytesIO]:
    """A server writing to a buffer instead of stdout."""
    server = LanguageServer("internals", "0", protocol_cls=protocol_cls)
    out = io.BytesIO()
    server.protocol.set_writer(io_.StdoutWriter(out))
    return server, out


def _sent(out: io.BytesIO) -> list[dict[str, Any]]:
    """The JSON-RPC messages written to `out`, each after its headers."""
    messages, data = [], out.getvalue()
    while data:
        headers, _, rest = data.partition(b"\r\n\r\n")
        length = int(headers.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def _receive(server: LanguageServer, message: dict[str, Any]) -> None:
    """`message` handled as if the editor had sent it (structured the way pygls's read loop does)."""
    protocol = server.protocol
    protocol.handle_message(json.loads(json.dumps({"jsonrpc": "2.0", **message}),
                                       object_hook=protocol.structure_message))


BODY = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
HEADER = b"Content-Length: %d\r\n" % len(BODY)


class _Reader:
    """An async reader of `chunks`, one per call, as stdio's `_Reader` answers."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    async def readline(self) -> bytes:
        return self.chunks.pop(0)

    async def readexactly(self, n: int) -> bytes:
        chunk = self.chunks.pop(0)
        assert len(chunk) in (0, n)
        return chunk


class _Protocol:
    """What run_async uses of a protocol; handling a message records it, or raises `fails`."""

    def __init__(self, fails: Exception | None = None) -> None:
        self.fails = fails
        self.handled: list[object] = []

    def structure_message(self, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def handle_message(self, message: object) -> None:
        if self.fails is not None:
            raise self.fails
        self.handled.append(message)


def _read(reader: _Reader, protocol: _Protocol, stop: threading.Event | None = None,
          error_handler: Any = None) -> None:
    """pygls's read loop over `reader`, as stdio.py runs it."""
    asyncio.run(io_.run_async(stop_event=stop or threading.Event(), reader=reader,  # type: ignore[arg-type]
                              protocol=protocol, error_handler=error_handler))  # type: ignore[arg-type]


def _initialize(server: LanguageServer) -> None:
    _receive(server, {"id": "init", "method": types.INITIALIZE,
                      "params": {"processId": None, "rootUri": None, "capabilities": {}}})


@pytest.mark.parametrize("package", ["pygls", "lsprotocol"])
def test_the_installed_pygls_and_lsprotocol_are_the_versions_pinned_in_pyproject(package: str) -> None:
    assert version(package) == _pinned(package), (
        f"{package} {version(package)} is installed but pyproject.toml pins {_pinned(package)}: install the "
        "pinned one, or upgrade deliberately: move the pin and make this module's tests pass")


def test_stdio_shutdown_sets_the_servers_private_stop_event() -> None:
    server = LanguageServer("internals", "0")
    assert "_stop_event" in vars(server), "JsonRPCServer no longer has a `_stop_event`"
    server._stop_event = stop = threading.Event()
    server.shutdown()
    assert stop.is_set(), "shutdown no longer sets `_stop_event`: stdio.start_io's read loop would never end"


def test_stdio_run_async_takes_the_stop_event_reader_protocol_and_error_handler_it_is_given() -> None:
    assert inspect.iscoroutinefunction(io_.run_async)
    assert {"stop_event", "reader", "protocol", "error_handler"} <= set(_parameters(io_.run_async))
    # stdio passes server.report_server_error as the error handler
    assert _parameters(LanguageServer.report_server_error) == ["self", "error", "source"]
    reported: list[tuple[object, ...]] = []
    protocol = _Protocol(fails=ValueError("bad message"))
    _read(_Reader(HEADER, b"\r\n", BODY, b""), protocol, error_handler=lambda *args: reported.append(args))
    assert reported == [(protocol.fails, JsonRpcException)]
    stop, protocol = threading.Event(), _Protocol()
    stop.set()
    _read(_Reader(HEADER, b"\r\n", BODY), protocol, stop)
    assert protocol.handled == [], "a set stop event no longer ends the read loop"


def test_stdio_run_async_skips_unknown_header_lines_and_ends_on_empty_reads() -> None:
    """stdio's reader answers a too-long header line with `_DROPPED_LINE` and the end of stdin (or a body cut
    short) with b""; run_async must skip the one and stop on the other."""
    for chunks, handled, unread in [
        ([_DROPPED_LINE, HEADER, _DROPPED_LINE, b"\r\n", BODY, b""], [json.loads(BODY)], []),
        ([HEADER, b"\r\n", b"", HEADER, b"\r\n", BODY], [], [HEADER, b"\r\n", BODY]),
    ]:
        protocol, reader = _Protocol(), _Reader(*chunks)
        _read(reader, protocol)
        assert protocol.handled == handled and reader.chunks == unread


def test_stdio_stdout_writer_wraps_stdout_and_set_writer_sends_framed_messages() -> None:
    server, out = _server()
    server.protocol.notify("pycapsule/status", {"state": "idle"})
    assert out.getvalue().startswith(b"Content-Length: ")
    assert _sent(out) == [{"jsonrpc": "2.0", "method": "pycapsule/status", "params": {"state": "idle"}}]


def test_server_requests_reach_the_protocols_handle_request_with_its_arguments() -> None:
    assert _parameters(JsonRPCProtocol._handle_request) == ["self", "msg_id", "method_name", "params"]
    seen = []

    class Recording(LanguageServerProtocol):
        def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
            seen.append((msg_id, method_name))

    server, _ = _server(Recording)
    _receive(server, {"id": 7, "method": types.TEXT_DOCUMENT_HOVER, "params": {
        "textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}})
    assert seen == [(7, types.TEXT_DOCUMENT_HOVER)]


def test_server_notifications_reach_the_protocols_handle_notification_with_its_arguments() -> None:
    assert _parameters(JsonRPCProtocol._handle_notification) == ["self", "method_name", "params"]
    seen = []

    class Recording(LanguageServerProtocol):
        def _handle_notification(self, method_name: str, params: Any) -> None:
            seen.append(method_name)

    server, _ = _server(Recording)
    _receive(server, {"method": types.INITIALIZED, "params": {}})
    assert seen == [types.INITIALIZED]


def test_server_send_response_answers_a_request_with_the_error_given() -> None:
    assert _parameters(JsonRPCProtocol._send_response)[:4] == ["self", "msg_id", "result", "error"]
    server, out = _server()
    server.protocol._send_response(7, None, JsonRpcServerNotInitialized().to_response_error())
    [answer] = _sent(out)
    assert answer["id"] == 7 and answer["error"]["code"] == -32002 and "result" not in answer


def test_text_documents_the_workspace_creates_every_document_through_create_text_document() -> None:
    assert _parameters(Workspace._create_text_document)[:5] == ["self", "doc_uri", "source", "version",
                                                                 "language_id"]
    workspace, created = Workspace(None), []
    create = workspace._create_text_document

    def recording(*args: Any, **kwargs: Any) -> TextDocument:
        created.append(args[0])
        return create(*args, **kwargs)

    workspace._create_text_document = recording  # type: ignore[method-assign]
    workspace.put_text_document(types.TextDocumentItem(URI, "python", 1, "a\n"))
    workspace.get_text_document("file:///unopened.py")
    assert created == [URI, "file:///unopened.py"]


def test_text_documents_a_documents_class_can_be_swapped_for_one_that_overrides_lines_only() -> None:
    assert all("__slots__" not in vars(cls) for cls in TextDocument.__mro__), "TextDocument has slots now"
    assert isinstance(inspect.getattr_static(TextDocument, "lines"), property)
    assert isinstance(inspect.getattr_static(TextDocument, "source"), property)
    assert {name for name in vars(LspTextDocument) if not name.startswith("__")} == {"lines"}
    workspace = Workspace(None)
    use_lsp_lines(workspace)
    workspace.put_text_document(types.TextDocumentItem(URI, "python", 3, "a\fb\nc"))
    document = workspace.get_text_document(URI)
    assert type(document) is LspTextDocument
    assert (document.uri, document.version, document.source) == (URI, 3, "a\fb\nc")
    assert document.lines == ("a\fb\n", "c")


def test_text_documents_an_incremental_change_finds_its_lines_through_lines() -> None:
    document = LspTextDocument(URI, "a\fb\nc\n", version=1)
    document.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=1)),
        text="X"))
    assert document.source == "a\fb\nX\n", "an incremental change no longer splits the text with `lines`"


def test_text_documents_the_workspace_exists_before_the_initialize_handler_and_stays() -> None:
    """lifecycle.py's `initialize` handler calls use_lsp_lines(server.workspace): the workspace must be
    there by then, and be the one documents open in afterwards."""
    server, out = _server()
    seen = []

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        seen.append(server.workspace)
        use_lsp_lines(server.workspace)

    _initialize(server)
    assert [answer["id"] for answer in _sent(out)] == ["init"] and seen == [server.workspace]
    _receive(server, {"method": types.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": "a\fb\n"}}})
    assert type(server.workspace.get_text_document(URI)) is LspTextDocument


def test_lifecycle_requests_to_the_editor_wait_in_the_protocols_request_futures_by_id() -> None:
    server, _ = _server()
    assert isinstance(server.protocol._request_futures, dict)
    pending = server.protocol.send_request(types.WORKSPACE_APPLY_EDIT, None, msg_id="edit")
    assert server.protocol._request_futures == {"edit": pending} and isinstance(pending, Future)
    _receive(server, {"id": "edit", "result": {"applied": True}})
    assert server.protocol._request_futures == {} and pending.done()


def test_lifecycle_pygls_shutdown_runs_our_handler_then_cancels_the_other_pending_requests() -> None:
    """Our `shutdown` handler cancels them first, from a copy, skipping `protocol.msg_id` (the shutdown
    request's own future, which is among them)."""
    server, out = _server()
    _initialize(server)
    pending = server.protocol.send_request(types.WORKSPACE_APPLY_EDIT, None, msg_id="edit")
    seen = []

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        futures = server.protocol._request_futures
        seen.append((server.protocol.msg_id, sorted(futures), pending.cancelled()))

    _receive(server, {"id": "bye", "method": types.SHUTDOWN})
    assert seen == [("bye", ["bye", "edit"], False)]
    assert pending.cancelled() and _sent(out)[-1] == {"jsonrpc": "2.0", "id": "bye", "result": None}


def test_progress_work_done_tokens_hold_a_future_per_token_by_the_token() -> None:
    server, _ = _server()
    progress = server.work_done_progress
    progress.begin("run-1", types.WorkDoneProgressBegin(title="generating"))
    assert isinstance(progress.tokens, dict) and isinstance(progress.tokens["run-1"], Future)
    progress.end("run-1", types.WorkDoneProgressEnd(message="done"))
    progress.tokens.pop("run-1", None)
    assert "run-1" not in progress.tokens


def test_positions_the_position_codec_from_its_module_counts_code_units_with_impl() -> None:
    from pygls.workspace import PositionCodec as Exported
    from pygls.workspace.position_codec import PositionCodec

    assert PositionCodec is Exported and isinstance(Workspace(None).position_codec, PositionCodec)
    kinds = types.PositionEncodingKind
    units = {kind: PositionCodec(kind).impl.code_units_for_char("😀")
             for kind in (kinds.Utf8, kinds.Utf16, kinds.Utf32)}
    assert units == {kinds.Utf8: 4, kinds.Utf16: 2, kinds.Utf32: 1}
    assert PositionCodec().client_num_units("a😀") == 3
