"""How a project imports one of its modules: its dotted name, the folders put on `sys.path`, pytest's flags.

One rule for every front end (check, generate, the language server, the bench), modelled on pytest's
default "prepend" import mode: a module inside a chain of packages (folders with `__init__.py`) is
imported under its dotted name with the folder above the topmost package first on `sys.path`; a loose
module is imported under its own name with its folder first. On top of that, the project's declared
source roots are importable too, as an installed project would be: `[tool.pytest.ini_options] pythonpath`
(and the same key in pytest.ini, tox.ini, setup.cfg), setuptools' `package-dir` / `packages.find.where`,
poetry's and hatch's package folders, a `src/` folder, and the project root itself. A module under a
source root whose folders have no `__init__.py` (a namespace package) is named from that root.
"""

from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycapsule.sandbox.roots import shared_folder

PYTEST_DEFAULT_FLAGS = ("ELLIPSIS",)
"""pytest's default `doctest_optionflags`."""


@dataclass(frozen=True)
class ModuleImport:
    name: str
    """Dotted module name: 'pkg.sub.mod'; 'pkg' for pkg/__init__.py; the file's stem for a loose module."""
    path: Path
    """The module's file (absolute)."""
    root: Path
    """The folder the sandbox makes readable; every import path lies inside it."""
    import_paths: tuple[Path, ...]
    """Folders put first on sys.path, in order."""
    is_package: bool
    """The file is a package's __init__.py."""
    optionflags: tuple[str, ...] = PYTEST_DEFAULT_FLAGS
    """Doctest option flag names, as pytest would use them for this project."""
    conftests: tuple[Path, ...] = ()
    """The conftest.py files pytest loads for this module, outermost first."""


@dataclass(frozen=True)
class PytestConfig:
    folder: Path
    """Where the config file is (pytest's rootdir when given one)."""
    pythonpath: tuple[str, ...] = ()
    doctest_optionflags: tuple[str, ...] | None = None
    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] | None = None
    addopts: tuple[str, ...] = ()


def module_import(path: Path, root: Path) -> ModuleImport:
    """How `path` (a .py file under `root`) is imported; never raises for odd layouts (a loose module)."""
    path, root = path.absolute(), root.absolute()
    while (root / "__init__.py").is_file() and not shared_folder(root.parent):
        root = root.parent  # a package with no project marker above it: its parent holds the chain
    config = pytest_config(path.parent, root)
    roots = source_roots(root, config)
    parts = [] if path.name == "__init__.py" else [path.stem]
    base = path.parent
    while (base / "__init__.py").is_file() and base != root and base.name.isidentifier():
        parts.insert(0, base.name)
        base = base.parent
    if base not in roots:
        for source_root in roots:
            between = base.relative_to(source_root).parts if base.is_relative_to(source_root) else None
            if between and all(part.isidentifier() for part in between):
                parts[0:0] = between
                base = source_root
                break
    flags = config.doctest_optionflags if config and config.doctest_optionflags is not None \
        else PYTEST_DEFAULT_FLAGS
    conftests = conftest_files(path, config.folder if config is not None else root, root)
    if not parts or not all(part.isidentifier() for part in parts):
        return ModuleImport(loose_name(path), path, root, _unique([path.parent, *roots]), False, flags,
                            conftests)
    paths = [base, *roots]
    if path.parent != base and not (path.parent / "__init__.py").is_file():
        paths.insert(1, path.parent)  # a loose module's siblings import by plain name, as with pytest
    return ModuleImport(".".join(parts), path, root, _unique(paths), path.name == "__init__.py", flags,
                        conftests)


def conftest_files(path: Path, rootdir: Path, root: Path) -> tuple[Path, ...]:
    """The conftest.py files pytest loads for the module at `path`: one per folder from `rootdir` (its
    config file's folder, where conftests stop being looked for) down to the module's own, outermost first;
    none outside `root`, which is all the sandbox shows."""
    top = rootdir if rootdir.is_relative_to(root) else root
    folders = [folder for folder in [path.parent, *path.parent.parents] if folder.is_relative_to(top)]
    found = [folder / "conftest.py" for folder in reversed(folders)]
    return tuple(file for file in found if file != path and file.is_file())


def loose_name(path: Path) -> str:
    """The name a module outside any package imports under: its file's stem, made an identifier."""
    stem = path.stem.replace("-", "_")
    return stem if stem.isidentifier() else "module"


def source_roots(root: Path, config: PytestConfig | None = None) -> tuple[Path, ...]:
    """The project's declared (and conventional) source folders, most specific first, the root last."""
    found: list[Path] = []
    if config is not None:
        found += [(config.folder / entry).absolute() for entry in config.pythonpath]
    found += [root / folder for folder in _packaging_folders(root)]
    if (root / "src").is_dir():
        found.append(root / "src")
    found.append(root)
    inside = [folder for folder in found if folder.is_relative_to(root) and folder.is_dir()]
    return _unique(sorted(inside, key=lambda folder: -len(folder.parts)) if inside else [root])


def pytest_config(start: Path, root: Path) -> PytestConfig | None:
    """The nearest pytest configuration at or above `start`, not above `root` (pytest's own search order
    within one folder: pytest.ini, pyproject.toml, tox.ini, setup.cfg)."""
    for folder in [start, *start.parents]:
        for reader in (_pytest_ini, _pyproject_pytest, _tox_ini, _setup_cfg):
            found = reader(folder)
            if found is not None:
                return found
        if folder == root or not folder.is_relative_to(root):
            return None
    return None


def _unique(paths: list[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return ()


def _ini_section(path: Path, section: str) -> PytestConfig | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    if not parser.has_section(section):
        return None
    values = parser[section]
    flags = _words(values["doctest_optionflags"]) if "doctest_optionflags" in values else None
    files = _words(values["python_files"]) if "python_files" in values else None
    return PytestConfig(path.parent, _words(values.get("pythonpath", "")), flags,
                        _words(values.get("testpaths", "")), files, _words(values.get("addopts", "")))


def _pytest_ini(folder: Path) -> PytestConfig | None:
    found = _ini_section(folder / "pytest.ini", "pytest")
    if found is None and (folder / "pytest.ini").is_file():
        return PytestConfig(folder)  # pytest.ini always marks the rootdir, even when empty
    return found


def _tox_ini(folder: Path) -> PytestConfig | None:
    return _ini_section(folder / "tox.ini", "pytest")


def _setup_cfg(folder: Path) -> PytestConfig | None:
    return _ini_section(folder / "setup.cfg", "tool:pytest")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _pyproject_pytest(folder: Path) -> PytestConfig | None:
    path = folder / "pyproject.toml"
    if not path.is_file():
        return None
    table = _read_toml(path).get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(table, dict):
        return None
    flags = _words(table["doctest_optionflags"]) if "doctest_optionflags" in table else None
    files = _words(table["python_files"]) if "python_files" in table else None
    return PytestConfig(folder, _words(table.get("pythonpath", [])), flags,
                        _words(table.get("testpaths", [])), files, _words(table.get("addopts", [])))


def _packaging_folders(root: Path) -> list[str]:
    """Source folders the packaging metadata names: setuptools, poetry, hatch, setup.cfg."""
    folders: list[str] = []
    tool = _read_toml(root / "pyproject.toml").get("tool", {}) if (root / "pyproject.toml").is_file() else {}
    setuptools = tool.get("setuptools", {}) if isinstance(tool, dict) else {}
    if isinstance(setuptools, dict):
        package_dir = setuptools.get("package-dir", {})
        if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
            folders.append(package_dir[""])
        find = setuptools.get("packages", {})
        if isinstance(find, dict) and isinstance(find.get("find"), dict):
            folders += [w for w in find["find"].get("where", []) if isinstance(w, str)]
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    if isinstance(poetry, dict):
        folders += [p["from"] for p in poetry.get("packages", []) if isinstance(p, dict) and "from" in p]
    hatch = tool.get("hatch", {}) if isinstance(tool, dict) else {}
    wheel = hatch.get("build", {}).get("targets", {}).get("wheel", {}) if isinstance(hatch, dict) else {}
    if isinstance(wheel, dict):
        folders += [str(Path(p).parent) for p in wheel.get("packages", []) if isinstance(p, str)]
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg, encoding="utf-8")
            package_dir = parser.get("options", "package_dir", fallback="")
        except (configparser.Error, UnicodeDecodeError, OSError):
            package_dir = ""
        for line in package_dir.splitlines():
            key, _, value = line.partition("=")
            if not key.strip() and value.strip():
                folders.append(value.strip())
    return [folder for folder in folders if folder not in ("", ".")]
