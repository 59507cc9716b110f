"""The language server: the pygls server, its services (services.py) and the features registered on it.

The server object holds no state of its own beyond pygls': each piece has one owner among the services.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from pycapsule import __version__
from pycapsule.lsp.features import actions, commands, hover, lifecycle
from pycapsule.lsp.services import Services


class InitializeFirst(LanguageServerProtocol):
    """The LSP's order: before `initialize`, a request gets ServerNotInitialized (-32002) and a notification
    other than `exit` is dropped (pygls would run the handler, which fails without the client's capabilities,
    and answer -32603 with a traceback)."""

    initialize_seen = False

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if method_name == types.INITIALIZE:
            self.initialize_seen = True
        elif not self.initialize_seen:
            self._send_response(msg_id, None, JsonRpcServerNotInitialized().to_response_error())
            return
        super()._handle_request(msg_id, method_name, params)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        if self.initialize_seen or method_name == types.EXIT:
            super()._handle_notification(method_name, params)


class PycapsuleServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("pycapsule", __version__, protocol_cls=InitializeFirst)
        self.services = Services.build(self)

    def close(self, wait: float = 0.0) -> None:
        """Stop the runs and close the engines and the history (see Services.close)."""
        self.services.close(wait)


def build_server() -> PycapsuleServer:
    server = PycapsuleServer()
    for feature in (lifecycle, actions, commands, hover):
        feature.register(server, server.services)
    return server
