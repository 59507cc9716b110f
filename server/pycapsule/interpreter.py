"""Which Python the examples and tests run with: the project's own, found the way its users expect.

Order: the user's `python` setting (`--python`, `PYCAPSULE_PYTHON`, the user's config file, the editor's
selected interpreter), the active `$VIRTUAL_ENV`, a `.venv` or `venv` at the project root (uv, poetry
in-project, `python -m venv`), then the interpreter running pycapsule. A project's own file never names it
(`python` is a user-only setting). Finding one runs nothing: a cloned repository may ship a `.venv`, and
the host never executes a program the project provides (see `sandbox.host_python` for how a venv's
import path is read without running it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pycapsule.config import LoadedSettings

PROJECT_VENVS = (".venv", "venv")
"""Folders at the project root that hold its environment, in the order they are tried."""


@dataclass(frozen=True)
class Interpreter:
    path: str | None
    """The executable the sandbox runs (None: the interpreter running pycapsule)."""
    why: str
    """Why this one, in a few words: "--python", "$VIRTUAL_ENV", ".venv at the project root", ..."""

    def describe(self) -> str:
        """One phrase for messages: 'PATH (WHY)'."""
        return f"{self.path or 'the Python running pycapsule'} ({self.why})"


def venv_python(folder: Path) -> Path | None:
    """The interpreter of the virtual environment at `folder`, when it is one (a pyvenv.cfg beside bin/)."""
    if not (folder / "pyvenv.cfg").is_file():
        return None
    for name in ("python", "python3"):
        candidate = folder / "bin" / name
        if candidate.exists():
            return candidate.absolute()
    return None


def settings_interpreter(loaded: LoadedSettings, root: Path | None) -> Interpreter:
    """The interpreter `loaded` settings choose for the project at `root`, with where the choice came from."""
    return project_interpreter(loaded.settings.python, loaded.sources.get("python"), root)


def project_interpreter(configured: str | None, source: str | None, root: Path | None,
                        environ: Mapping[str, str] | None = None) -> Interpreter:
    """The interpreter for the project at `root`; `configured`/`source`: the `python` setting and where it
    came from (`LoadedSettings.sources`)."""
    environ = os.environ if environ is None else environ
    if configured:
        if source and source.startswith("the command line"):
            source = "--python"
        return Interpreter(configured, f"set by {source}" if source and source != "default" else "set")
    active = environ.get("VIRTUAL_ENV")
    if active and (found := venv_python(Path(active))) is not None:
        return Interpreter(str(found), "the active $VIRTUAL_ENV")
    if root is not None:
        for name in PROJECT_VENVS:
            if (found := venv_python(root / name)) is not None:
                return Interpreter(str(found), f"{name} at the project root")
    return Interpreter(None, "no project environment found")
