"""What the sandboxed interpreter needs from the host: the interpreter itself and its import path."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path


@functools.cache
def clean_import_path() -> tuple[str, ...]:
    """sys.path of a fresh `python -I` (stdlib, site-packages, .pth entries): the user's installed packages,
    without whatever this process added (test runners, the current directory)."""
    try:
        output = subprocess.run(
            [sys.executable, "-I", "-c", "import sys, json; print(json.dumps(sys.path))"],
            capture_output=True, text=True, timeout=30, check=True, env={"PATH": os.defpath},
        ).stdout
        paths = json.loads(output)
    except (OSError, subprocess.SubprocessError, ValueError):
        paths = sys.path
    return tuple(p for p in paths if isinstance(p, str) and os.path.isabs(p))


def interpreter() -> str:
    return os.path.realpath(sys.executable)


def interpreter_dirs() -> list[Path]:
    """Directories the interpreter itself lives in (a venv and the Python it was made from)."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  os.path.dirname(sys.executable), os.path.dirname(interpreter())}
    return [Path(c) for c in candidates if c and os.path.isdir(c)]


def covering_dirs(paths: list[Path]) -> list[Path]:
    """The smallest set of existing directories that contains every path (files count by their dir)."""
    dirs = sorted({(p if p.is_dir() else p.parent) for p in paths if p.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in dirs:
        if not any(candidate == k or k in candidate.parents for k in kept):
            kept.append(candidate)
    return kept
