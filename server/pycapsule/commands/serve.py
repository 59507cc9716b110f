"""`pycapsule serve`: the language server on stdio (the only transport; `--stdio` is accepted).

Started by hand on a terminal it says what it is in one line. Ctrl-C closes the server's engines
(sandbox, model) and leaves with `os._exit`: a thread reading stdin (pygls's reader, used when stdin
is not a pipe, a socket or a terminal: see lsp/stdio.py) cannot be interrupted, and waiting for it
(pygls' shutdown, then the interpreter's) hung, and a second Ctrl-C then ended in "Fatal Python error".
A second Ctrl-C during the close leaves at once.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from typing import Any

from pycapsule.commands import wording
from pycapsule.exit_codes import ExitCode

CLOSE_WAIT = 10.0
"""Seconds the server waits for its engines to close (a Docker sandbox removes its container) before it
leaves."""

def run(args: argparse.Namespace) -> int:
    server: Any = None  # set once built; a Ctrl-C before that has nothing to close

    def on_interrupt(_signum: int, _frame: Any) -> None:
        signal.signal(signal.SIGINT, lambda *_: _leave(ExitCode.INTERRUPTED))  # the second: leave now
        try:
            if server is not None:
                server.close(wait=CLOSE_WAIT)
        finally:
            print(wording.SERVE_STOPPED, file=sys.stderr, flush=True)
            _leave(ExitCode.INTERRUPTED)

    # Before the greeting, which tells the user Ctrl-C stops it: a press while the server is still being
    # built must end it the same way.
    signal.signal(signal.SIGINT, on_interrupt)
    from pycapsule.lsp.server import build_server
    from pycapsule.lsp.stdio import start_io

    # pygls logs through `logging`; stdout carries the protocol, so anything else goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="pycapsule serve: %(message)s")
    if sys.stdin.isatty():
        print(wording.SERVE_GREETING, file=sys.stderr, flush=True)
    server = build_server()
    try:
        start_io(server)
    finally:
        server.close(wait=CLOSE_WAIT)
    return ExitCode.OK


def _leave(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
