"""`PATH[::QUALNAME]` on the command line, shared by `generate` and `check`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_SOURCE_BYTES = 16 << 20
"""Larger files are refused in one sentence (reading, parsing and sending them would take minutes)."""


class UsageError(Exception):
    """Exit 2 with this one sentence."""


@dataclass(frozen=True)
class Target:
    path: Path
    qualname: str | None


def parse_target(text: str, command: str) -> Target:
    path_text, _, qualname = text.partition("::")
    path = Path(path_text)
    if not path_text:
        raise UsageError(f"give a Python file, e.g. pycapsule {command} mod.py::my_function")
    if not path.is_file():
        raise UsageError(f"{path_text} is not a file")
    try:
        size = path.stat().st_size
    except OSError as error:
        raise UsageError(f"{path_text} cannot be read: {error.strerror or error}") from None
    if size > MAX_SOURCE_BYTES:
        raise UsageError(f"{path_text} is {size >> 20} MiB, more than the {MAX_SOURCE_BYTES >> 20} MiB "
                         "a Python module may have here")
    return Target(path, qualname.strip() or None)
