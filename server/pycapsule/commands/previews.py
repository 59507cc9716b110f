"""What `generate` showed as a diff, kept so that `generate --write` applies exactly that, with no model call.

A preview is kept under a key made of the file's bytes, the target as resolved (path and qualname) and
everything that shapes a run (the settings without the key, the interpreter): the same command on the same
file with the same settings finds it; any change makes a new run. It lives beside the history (a folder
`previews/` in the user's cache folder), only the KEPT newest are kept, and `--write` uses one once. A run
that ended early (Ctrl-C, no model, no sandbox) is not kept: it is not what a whole run would show.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pycapsule.config import Settings
from pycapsule.history import default_path

KEPT = 32


@dataclass(frozen=True)
class Preview:
    text: str
    """The file as the run left it: every body that passed or was generated."""
    passed: bool
    results: list[dict[str, Any]]
    """The run's results as `generate --json` gives them."""
    created: float
    closest_text: str | None = None
    """`text` with the closest try of each function that gave up in place (what --write-closest writes)."""


@dataclass(frozen=True)
class Target:
    """One `generate` command's target: its file, what it asked for and what it ran with."""

    path: Path
    qualname: str | None
    key: str

    @classmethod
    def of(cls, path: Path, qualname: str | None, data: bytes, settings: Settings, python: str,
           add_examples: bool = False) -> Target:
        shaped_by = {"file": hashlib.sha256(data).hexdigest(), "path": str(path.resolve()),
                     "qualname": qualname, "settings": settings.public(), "python": python}
        if add_examples:  # a key of its own only when on: previews kept before the option keep theirs
            shaped_by["add_examples"] = True
        key = hashlib.sha256(json.dumps(shaped_by, sort_keys=True, default=str).encode()).hexdigest()
        return cls(path.resolve(), qualname, key)

    @property
    def _place(self) -> str:
        """The path and qualname only: to tell that this target had a preview for other contents."""
        return hashlib.sha256(f"{self.path}::{self.qualname or ''}".encode()).hexdigest()[:32]


def folder() -> Path:
    return default_path().parent / "previews"


def keep(target: Target, preview: Preview) -> None:
    """Store `preview` for `target` (replacing an older one of the same place) and forget the oldest."""
    where = folder()
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in where.glob(f"{target._place}-*.json"):
        with contextlib.suppress(OSError):
            old.unlink()
    data = json.dumps(asdict(preview)).encode()
    with tempfile.NamedTemporaryFile(dir=where, delete=False, suffix=".tmp") as handle:
        handle.write(data)
    os.replace(handle.name, where / f"{target._place}-{target.key}.json")
    kept = sorted(where.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for old in kept[KEPT:]:
        with contextlib.suppress(OSError):
            old.unlink()


def take(target: Target) -> Preview | None:
    """The preview made for exactly this target, file and settings, removed from the store; else None."""
    path = folder() / f"{target._place}-{target.key}.json"
    try:
        data = json.loads(path.read_bytes())
        path.unlink()
        closest = data.get("closest_text")
        return Preview(str(data["text"]), bool(data["passed"]), list(data["results"]), float(data["created"]),
                       str(closest) if closest is not None else None)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def outdated(target: Target) -> float | None:
    """When a preview of this file and target was made that no longer fits (the file or the settings changed
    since), else None."""
    found = [path for path in folder().glob(f"{target._place}-*.json")
             if not path.name.endswith(f"{target.key}.json")]
    if not found:
        return None
    with contextlib.suppress(OSError):
        return max(path.stat().st_mtime for path in found)
    return None

