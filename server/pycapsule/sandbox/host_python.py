"""What the sandboxed interpreter needs from the host: the interpreter itself and its import path."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path


@functools.cache
def clean_import_path(executable: str | None = None) -> tuple[str, ...]:
    """sys.path of a fresh `python -I` (stdlib, site-packages, .pth entries): the user's installed packages,
    without whatever this process added (test runners, the current directory)."""
    try:
        output = subprocess.run(
            [executable or sys.executable, "-I", "-c", "import sys, json; print(json.dumps(sys.path))"],
            capture_output=True, text=True, timeout=30, check=True, env={"PATH": os.defpath},
        ).stdout
        paths = json.loads(output)
    except (OSError, subprocess.SubprocessError, ValueError):
        paths = sys.path if executable is None else []
    return tuple(p for p in paths if isinstance(p, str) and os.path.isabs(p))


def interpreter(executable: str | None = None) -> str:
    return os.path.realpath(executable or sys.executable)


@functools.cache
def _prefixes(executable: str) -> tuple[str, ...]:
    try:
        output = subprocess.run(
            [executable, "-I", "-c",
             "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix]))"],
            capture_output=True, text=True, timeout=30, check=True, env={"PATH": os.defpath},
        ).stdout
        return tuple(str(p) for p in json.loads(output))
    except (OSError, subprocess.SubprocessError, ValueError):
        return ()


def interpreter_dirs(executable: str | None = None) -> list[Path]:
    """Directories the interpreter itself lives in (a venv and the Python it was made from)."""
    if executable is None:
        candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                      os.path.dirname(sys.executable), os.path.dirname(interpreter())}
    else:
        candidates = {*_prefixes(executable), os.path.dirname(executable),
                      os.path.dirname(interpreter(executable))}
    return [Path(c) for c in candidates if c and os.path.isdir(c)]


def covering_dirs(paths: list[Path]) -> list[Path]:
    """The smallest set of existing directories that contains every path (files count by their dir)."""
    dirs = sorted({(p if p.is_dir() else p.parent) for p in paths if p.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in dirs:
        if not any(candidate == k or k in candidate.parents for k in kept):
            kept.append(candidate)
    return kept
