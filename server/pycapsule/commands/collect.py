"""What `pycapsule check [PATH[::QUALNAME]]...` checks, as pytest and ruff collect: each file named, the `.py`
files under each folder named, or, with no path, under the project around the current folder (the nearest
folder above it with a pyproject.toml or .git, else the current folder); in the order given, each file once.

A folder's walk never enters what pytest never enters by default (hidden folders such as `.git`, `.venv` and
`.tox`, `venv`, `build`, `dist`, `node_modules`, `*.egg`, `__pycache__`, `site-packages`) nor a virtual
environment of any name (a folder with a `pyvenv.cfg`); it skips `setup.py` and `__main__.py`, which running
would start a build or a program (pytest's doctest collection skips them too). A folder or file named on the
command line is taken as it is, hidden or not. The project's own pytest `testpaths` and `norecursedirs` are
not read: `testpaths` usually names the tests' folder, not the code whose examples `check` runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pycapsule.commands import wording
from pycapsule.commands.output import UsageError
from pycapsule.commands.targets import parse_target
from pycapsule.config import project_root
from pycapsule.project_tests import never_entered

SKIPPED_FILES = frozenset({"setup.py", "__main__.py"})
"""Files a folder's walk leaves out: importing them runs a build or a program."""


@dataclass(frozen=True)
class FileToCheck:
    path: Path
    """As the user wrote it, or the folder as written joined with the path below it."""
    qualname: str | None
    """`PATH::QUALNAME`: only that function (None: the whole file)."""
    named: bool
    """Named on the command line (a problem reading it is a usage error), not found in a folder."""


def the_project() -> Path:
    """What `check` with no path checks: the project around the current folder, as a path from it ('.',
    '..', '../..')."""
    here = Path.cwd()
    return Path(os.path.relpath(project_root(here) or here, here))


def collect(targets: Sequence[str]) -> list[FileToCheck]:
    """The files to check, in order, each once (a whole file wins over one of its functions); raises
    UsageError for a path that does not exist or a `::QUALNAME` after a folder."""
    found: dict[tuple[Path, str | None], FileToCheck] = {}
    for text in targets:
        path_text, _, qualname = text.partition("::")
        folder = Path(path_text)
        if path_text and folder.is_dir():
            if qualname.strip():
                raise UsageError(wording.folder_with_function(path_text, folder, qualname.strip()))
            for path in python_files(folder):
                found.setdefault(_key(path, None), FileToCheck(path, None, False))
            continue
        try:
            target = parse_target(text, "check")
        except UsageError as error:
            if path_text and not folder.exists():
                raise UsageError(wording.not_a_file_or_folder(path_text)) from None
            raise error from None
        found[_key(target.path, target.qualname)] = FileToCheck(target.path, target.qualname, True)
    whole = {key[0] for key in found if key[1] is None}
    return [item for key, item in found.items() if key[1] is None or key[0] not in whole]


def _key(path: Path, qualname: str | None) -> tuple[Path, str | None]:
    return path.resolve(), qualname


def python_files(folder: Path) -> Iterator[Path]:
    """The `.py` files under `folder` a user means, in a stable order: each folder's own files, then its
    subfolders', by name."""
    for here, folders, files in os.walk(folder):
        base = Path(here)
        folders[:] = sorted(name for name in folders if not never_entered(base / name))
        for name in sorted(files):
            if name.endswith(".py") and name not in SKIPPED_FILES and (base / name).is_file():
                yield base / name
