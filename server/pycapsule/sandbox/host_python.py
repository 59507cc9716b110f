"""What the sandboxed interpreter needs from the host: the interpreter itself and its import path."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Venv:
    """A virtual environment, read from its files: its interpreter is never run on the host."""

    folder: Path
    base: str
    """The Python it was made from (outside the venv's folder and the folder holding it)."""
    system_site_packages: bool


def venv_of(executable: str) -> Venv | None:
    """The virtual environment `executable` belongs to (a pyvenv.cfg one folder above its own), or None.
    Raises UnsafeInterpreter when its base Python would be a program inside the venv or its project."""
    folder = Path(os.path.abspath(executable)).parent.parent
    try:
        config = _pyvenv_cfg(folder / "pyvenv.cfg")
    except OSError:
        return None
    home = config.get("home", "")
    version = (config.get("version_info") or config.get("version") or "").split(".")
    names = [f"python{'.'.join(version[:2])}", f"python{version[0]}", "python"] if version[0] else ["python3"]
    linked = os.path.realpath(executable)
    candidates = [linked] + [os.path.join(home, name) for name in names if home]
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and not Path(real).is_relative_to(folder.parent):
            return Venv(folder, real, config.get("include-system-site-packages", "").lower() == "true")
    raise UnsafeInterpreter(
        f"{executable} is a virtual environment whose Python lies inside its project ({home or 'no home'}); "
        "pycapsule runs no program a project provides outside the sandbox: name an interpreter installed "
        "outside the project with --python")


class UnsafeInterpreter(ValueError):
    """The interpreter cannot be used without running a project-provided program on the host."""


def _pyvenv_cfg(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip().lower()] = value.strip()
    return values


def _venv_site_packages(venv: Venv) -> list[str]:
    """The venv's site-packages and the folders its .pth files add (path lines only: an `import` line is
    code, and site-packages code runs only inside the sandbox, as part of an import)."""
    folders = [p for pattern in ("lib/python*/site-packages", "lib64/python*/site-packages")
               for p in venv.folder.glob(pattern) if p.is_dir()]
    found = sorted({os.path.realpath(p) for p in folders})
    for site in list(found):
        for pth in sorted(Path(site).glob("*.pth")):
            try:
                lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                entry = os.path.normpath(os.path.join(site, line))
                if os.path.isdir(entry) and entry not in found:
                    found.append(entry)
    return found


@functools.cache
def _query(executable: str, isolated_site: bool) -> dict[str, object]:
    flags = ["-I", "-S"] if isolated_site else ["-I"]
    try:
        output = subprocess.run(
            [executable, *flags, "-c", "import sys, json; print(json.dumps({'path': sys.path, "
             "'prefixes': [sys.prefix, sys.base_prefix, sys.exec_prefix]}))"],
            capture_output=True, text=True, timeout=30, check=True, env={"PATH": os.defpath},
        ).stdout
        found = json.loads(output)
        return found if isinstance(found, dict) else {}
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def _abs_strings(values: object) -> list[str]:
    return [p for p in values if isinstance(p, str) and os.path.isabs(p)] if isinstance(values, list) else []


@functools.cache
def clean_import_path(executable: str | None = None) -> tuple[str, ...]:
    """sys.path of a fresh `python -I` (stdlib, site-packages, .pth entries): the user's installed packages,
    without whatever this process added (test runners, the current directory). A venv's is read from its
    files and its base Python (`venv_of`): no program of the venv runs on the host."""
    if executable is None:
        found = _query(sys.executable, False)
        return tuple(_abs_strings(found["path"] if found else sys.path))
    venv = venv_of(executable)
    if venv is None:
        return tuple(_abs_strings(_query(executable, False).get("path")))
    stdlib = _abs_strings(_query(venv.base, True).get("path"))
    paths = stdlib + _venv_site_packages(venv)
    if venv.system_site_packages:
        paths += [p for p in _abs_strings(_query(venv.base, False).get("path")) if p not in stdlib]
    return tuple(dict.fromkeys(paths))


def interpreter(executable: str | None = None) -> str:
    return os.path.realpath(executable or sys.executable)


def interpreter_dirs(executable: str | None = None) -> list[Path]:
    """Directories the interpreter itself lives in (a venv and the Python it was made from)."""
    if executable is None:
        candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                      os.path.dirname(sys.executable), os.path.dirname(interpreter())}
    else:
        venv = venv_of(executable)
        queried = _query(venv.base if venv else executable, True).get("prefixes")
        candidates = {*_abs_strings(queried), os.path.dirname(executable),
                      os.path.dirname(interpreter(executable))}
        if venv is not None:
            candidates |= {str(venv.folder), os.path.dirname(venv.base)}
    return [Path(c) for c in candidates if c and os.path.isdir(c)]


def covering_dirs(paths: list[Path]) -> list[Path]:
    """The smallest set of existing directories that contains every path (files count by their dir)."""
    dirs = sorted({(p if p.is_dir() else p.parent) for p in paths if p.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in dirs:
        if not any(candidate == k or k in candidate.parents for k in kept):
            kept.append(candidate)
    return kept
