"""A local stand-in for the Hugging Face Hub: files served at `/{repo}/resolve/{revision}/{path}`, answered
as the Hub does with a redirect to its file store, HTTP Range honoured, every request recorded; it can
answer 404, send the wrong bytes, or cut the connection part way."""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

from pycapsule.embedded_model.catalog import HubFile

STORE = "/store"
"""Where the Hub's redirect points (its file store)."""


@dataclass(frozen=True)
class Request:
    path: str
    """The path asked for, without the host (a proxy is sent the whole URL: see `via_proxy`)."""
    range: str | None
    via_proxy: bool


class FakeHub:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[Request] = []
        self.cut_after: int | None = None
        """Bytes each file response sends before the connection is cut (None: the whole answer)."""
        self.cuts_left = 0
        """How many responses are cut (then whole ones again)."""
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.answer(self)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def publish(self, file: HubFile, data: bytes) -> None:
        self.files[f"/{file.repo}/resolve/{file.revision}/{file.path}"] = data

    def cut(self, after: int, times: int = 1) -> None:
        self.cut_after, self.cuts_left = after, times

    def file_requests(self) -> list[Request]:
        """The requests for a file's bytes (at the store, after the redirect)."""
        return [request for request in self.requests if request.path.startswith(STORE)]

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        via_proxy = bool(parts.netloc)
        path = parts.path
        self.requests.append(Request(path, handler.headers.get("Range"), via_proxy))
        stored = path.removeprefix(STORE)
        data = self.files.get(stored)
        if data is None:
            handler.send_error(404, "Entry not found")
            return
        if not path.startswith(STORE):
            handler.send_response(302)
            handler.send_header("Location", f"{STORE}{stored}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        start = 0
        asked = re.fullmatch(r"bytes=(\d+)-", handler.headers.get("Range") or "")
        if asked is not None:
            start = int(asked.group(1))
            if start >= len(data):
                handler.send_error(416, "Range Not Satisfiable")
                return
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            handler.send_response(200)
        body = data[start:]
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if self.cut_after is not None and self.cuts_left > 0:
            self.cuts_left -= 1
            handler.wfile.write(body[: self.cut_after])
            handler.wfile.flush()
            handler.connection.shutdown(socket.SHUT_RDWR)
            handler.close_connection = True
            return
        handler.wfile.write(body)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
