"""The pygls internals the server relies on, each named, so that a pygls upgrade that changes one fails
here first, saying which, instead of somewhere in the editors' behaviour (issue 67).

- lsp/stdio.py reads stdin in the event loop: it calls `pygls.io_.run_async` itself and sets the server's
  `_stop_event`, as pygls's own `start_io` does, since `shutdown` sets that event to end the read loop;
- lsp/server.py answers requests before `initialize` by overriding the protocol's `_handle_request` and
  `_handle_notification`, and answers with `_send_response`;
- lsp/text_documents.py makes the workspace's documents split lines by the LSP's rule: it wraps the
  workspace's `_create_text_document` and gives each document the subclass `LspTextDocument`."""

from __future__ import annotations

import inspect
import threading
import tomllib
from importlib.metadata import version
from pathlib import Path

from lsprotocol import types
from pycapsule.lsp.text_documents import LspTextDocument, use_lsp_lines
from pygls import io_
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.server import JsonRPCServer
from pygls.workspace import TextDocument, Workspace

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PINNED = next(requirement.split("==")[1] for requirement in tomllib.loads(PYPROJECT.read_text())["project"][
    "dependencies"] if requirement.startswith("pygls=="))


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_the_pygls_installed_is_the_pinned_one_these_tests_check() -> None:
    assert version("pygls") == PINNED, f"pygls {version('pygls')} is not the pinned {PINNED}"


def test_stdio_the_read_loop_and_the_stop_event_are_still_pygls_own() -> None:
    assert parameters(io_.run_async)[:3] == ["stop_event", "reader", "protocol"]
    assert "error_handler" in parameters(io_.run_async)
    assert "_stop_event" in inspect.getsource(JsonRPCServer.shutdown), "shutdown no longer sets _stop_event"
    assert "_stop_event" in inspect.getsource(JsonRPCServer._start_io_async)
    assert callable(io_.StdoutWriter) and callable(LanguageServer.report_server_error)
    server = LanguageServer("internals", "0")
    server._stop_event = threading.Event()
    server.shutdown()
    assert server._stop_event.is_set()


def test_server_the_protocol_still_dispatches_through_the_two_handlers_it_overrides() -> None:
    assert parameters(JsonRPCProtocol._handle_request) == ["self", "msg_id", "method_name", "params"]
    assert parameters(JsonRPCProtocol._handle_notification) == ["self", "method_name", "params"]
    assert parameters(JsonRPCProtocol._send_response)[:4] == ["self", "msg_id", "result", "error"]
    source = inspect.getsource(JsonRPCProtocol)
    assert "self._handle_request," in source and "self._handle_notification," in source, \
        "requests and notifications no longer go through _handle_request / _handle_notification"
    assert issubclass(LanguageServerProtocol, JsonRPCProtocol) and types.INITIALIZE == "initialize"


def test_text_documents_the_workspace_still_creates_its_documents_in_one_place() -> None:
    assert "_create_text_document" in inspect.getsource(Workspace.put_text_document)
    assert isinstance(inspect.getattr_static(TextDocument, "lines"), property)
    assert not hasattr(TextDocument, "__slots__"), "a document's class can no longer be swapped"
    workspace = Workspace(None)
    use_lsp_lines(workspace)
    workspace.put_text_document(types.TextDocumentItem("file:///m.py", "python", 1, "a\fb\nc"))
    document = workspace.get_text_document("file:///m.py")
    assert type(document) is LspTextDocument and document.lines == ("a\fb\n", "c")
