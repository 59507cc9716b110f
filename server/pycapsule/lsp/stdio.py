"""The editor's messages read from stdin inside the event loop.

pygls's own stdio reader hands every header line and every body to a thread of its pool and back, so a
request that arrives right behind another (a hover or a code action sent behind a run's start) waits for
the pieces of both to cross threads, and for the work the first one started. Read by the event loop,
the messages already in the pipe are taken one after another as they came, each dispatched before any
task an earlier one started gets to run: a synchronous handler (most of ours) answers at once.

Used when the event loop can watch stdin (a pipe, a socket or a terminal, on POSIX) and stdin is not the
same open file as stdout (an editor may hand over one socket for both: making it non-blocking for reading
would make every write to it non-blocking too). Otherwise pygls's reader.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

_LINE_LIMIT = 1 << 20
"""The longest header line kept (a JSON-RPC header line is tens of bytes)."""

_DROPPED_LINE = b"X-Pycapsule-Dropped: line too long\r\n"
"""What `readline` answers for a longer line: a header pygls ignores, so the next message still reads."""


def start_io(server: LanguageServer) -> None:
    """Serve on stdin/stdout until the editor's `exit` or the end of stdin (as `server.start_io` does)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if not _watchable(stdin, stdout):
        server.start_io(stdin, stdout)
        return
    # pygls's own start_io sets these two; `shutdown` sets the event, which ends the read loop.
    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(_serve(server, stdin, stop))
    except BrokenPipeError:
        pass  # the editor went away: nothing left to tell it
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _serve(server: LanguageServer, stdin: BinaryIO, stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=_LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    try:
        await run_async(stop_event=stop, reader=_Reader(stream), protocol=server.protocol,
                        error_handler=server.report_server_error)
    finally:
        transport.close()


class _Reader:
    """The reader `pygls.io_.run_async` takes: b"" at the end of the input, never an exception."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        try:
            return await self._stream.readline()
        except ValueError:  # over the limit; the stream has dropped what it buffered of the line
            return _DROPPED_LINE

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def _watchable(stdin: BinaryIO, stdout: BinaryIO) -> bool:
    if os.name != "posix":
        return False
    try:
        ours, theirs = os.fstat(stdin.fileno()), os.fstat(stdout.fileno())
    except (OSError, ValueError):
        return False
    # A character device only when a terminal: the event loop cannot watch /dev/null.
    watchable = stat.S_ISFIFO(ours.st_mode) or stat.S_ISSOCK(ours.st_mode) or os.isatty(stdin.fileno())
    return watchable and not os.path.samestat(ours, theirs)
