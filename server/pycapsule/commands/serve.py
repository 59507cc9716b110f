"""`pycapsule serve`: the language server on stdio (the only transport; `--stdio` is accepted)."""

from __future__ import annotations

import argparse
import logging
import sys


def run(args: argparse.Namespace) -> int:
    from pycapsule.lsp.server import build_server

    # pygls logs through `logging`; stdout carries the protocol, so anything else goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="pycapsule serve: %(message)s")
    server = build_server()
    try:
        server.start_io()
    finally:
        server.close()
    return 0
