"""A signal handler for the length of a block."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


@contextmanager
def handling(signum: int, handler: Callable[[int, FrameType | None], Any] | int | None) -> Iterator[None]:
    """`handler` answers `signum` while the block runs; the former handler is put back after. Only the main
    thread may set handlers: in any other thread the block runs with the handlers as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, previous)
