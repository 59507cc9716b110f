"""A benchmark tool's progress lines: on stderr, named by the tool, so that stdout holds only its table."""

from __future__ import annotations

import sys
from collections.abc import Callable

Progress = Callable[[str], None]


def progress_for(tool: str) -> Progress:
    def progress(line: str) -> None:
        print(f"measurements {tool}: {line}", file=sys.stderr, flush=True)

    return progress
