"""`PATH[::QUALNAME]` on the command line, shared by `generate` and `check`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
    return Target(path, qualname.strip() or None)
