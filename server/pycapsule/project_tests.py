"""The project's own tests of a capsule: which test functions exercise it, found host-side by the syntax tree.

Test files are the ones pytest would collect (its `testpaths` and `python_files`, defaults `test_*.py` and
`*_test.py`; the folders it never enters, and virtual environments, are skipped). A test function is
selected when its file imports from the capsule's package (or module) and its code names the function
(for a method: the method, in a file that names its class), directly or through a helper or fixture of
the same file that does. Nothing is run here; `tests_job` runs the selection in the sandbox.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import Capsule
from pycapsule.parsing import parse_source
from pycapsule.project import pytest_config

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
NEVER_ENTERED = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}",
                 "__pycache__", "site-packages")
"""pytest's default `norecursedirs`, and the folders no project keeps its tests in."""
MAX_FILES = 2000
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class TestSelection:
    __test__ = False  # not a pytest test class

    node_ids: tuple[str, ...]
    """pytest node ids relative to the project root: 'tests/test_x.py::test_f', '...::TestC::test_m'."""

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(node.split("::", 1)[0] for node in self.node_ids))

    def without(self, failed: set[str]) -> TestSelection:
        """The selection less the tests `failed` names: a test's id, one of its parameter sets' ids
        ('...::test_f[2]'), or its file's (it failed to be collected)."""
        return TestSelection(tuple(node for node in self.node_ids
                                   if not any(_covers(failure, node) for failure in failed)))


def _covers(failure: str, node: str) -> bool:
    return failure == node or failure.startswith(node + "[") or node.startswith(failure + "::")


def select_tests(capsule: Capsule, module_name: str, root: Path) -> TestSelection:
    """The tests under `root` that exercise `capsule` (a function of the module imported as `module_name`)."""
    if capsule.path is None:
        return TestSelection(())
    own = capsule.path.resolve()
    found: list[str] = []
    for path in test_files(root):
        if path.resolve() == own:
            continue
        found += [f"{path.relative_to(root).as_posix()}::{test}"
                  for test in tests_naming(path, capsule, module_name)]
    return TestSelection(tuple(found))


def test_files(root: Path) -> Iterator[Path]:
    """The files pytest collects under `root` with the project's configuration, at most MAX_FILES."""
    config = pytest_config(root, root)
    patterns = config.python_files if config and config.python_files else DEFAULT_PYTHON_FILES
    starts = [config.folder / entry for entry in config.testpaths] if config and config.testpaths else [root]
    seen = 0
    for start in starts:
        if not start.resolve().is_relative_to(root.resolve()):
            continue
        for folder, dirs, files in os.walk(start):
            dirs[:] = sorted(d for d in dirs if not never_entered(Path(folder) / d))
            for name in sorted(files):
                if any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                    seen += 1
                    if seen > MAX_FILES:
                        return
                    yield Path(folder) / name


def never_entered(folder: Path) -> bool:
    return any(fnmatch.fnmatch(folder.name, pattern) for pattern in NEVER_ENTERED) \
        or (folder / "pyvenv.cfg").is_file()


def tests_naming(path: Path, capsule: Capsule, module_name: str) -> list[str]:
    """The test functions of the file at `path` that exercise `capsule`, as node ids within the file."""
    try:
        stat = path.stat()
    except OSError:
        return []
    tree = _parsed(str(path), stat.st_mtime_ns, stat.st_size)
    if tree is None or not _imports_from(tree, module_name, capsule):
        return []
    classes = capsule.class_names
    if classes and classes[-1] not in _names(tree):
        return []
    helpers = _helpers_naming(tree, capsule.name)
    wanted = {capsule.name, *helpers}
    found = []
    for node in tree.body:
        if _is_test_function(node) and _uses(node, wanted):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
            tests = [m for m in methods if m.name.startswith("test")]
            own = wanted | {m.name for m in methods if m not in tests and _uses(m, wanted)}
            found += [f"{node.name}::{m.name}" for m in tests if _uses(m, own)]
    return found


@functools.lru_cache(maxsize=4096)
def _parsed(path: str, mtime_ns: int, size: int) -> ast.Module | None:
    """The test file's syntax tree, read again only when the file changes (a language server asks often)."""
    if size > MAX_FILE_BYTES:
        return None
    try:
        return parse_source(Path(path).read_text(encoding="utf-8", errors="replace"), path)
    except (OSError, SyntaxError, ValueError):
        return None


def _imports_from(tree: ast.Module, module_name: str, capsule: Capsule) -> bool:
    """The file imports the capsule's package or module, or a name it defines."""
    top = module_name.split(".")[0]
    defined = {capsule.name, *capsule.class_names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == top for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom):
            if node.level > 0 or (node.module or "").split(".")[0] == top:
                return True
            if any(alias.name in defined for alias in node.names):
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    """Every identifier `node` uses: names, attributes, and the parameters a test takes (its fixtures)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
        elif isinstance(child, ast.arg):
            found.add(child.arg)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.isidentifier():
            found.add(child.value)  # getattr(obj, "name"), parametrize's argument names
    return found


def _uses(node: ast.AST, wanted: set[str]) -> bool:
    return not _names(node).isdisjoint(wanted)


def _helpers_naming(tree: ast.Module, name: str) -> set[str]:
    """Module-level functions (helpers, fixtures) of a test file that use `name`, and those that use them."""
    helpers = {n.name: n for n in tree.body
               if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_test_function(n)}
    using: set[str] = set()
    wanted = {name}
    while True:
        new = {h for h, node in helpers.items() if h not in using and _uses(node, wanted)}
        if not new:
            return using
        using |= new
        wanted |= new


def _is_test_function(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _is_test_class(node: ast.ClassDef) -> bool:
    """pytest's default `python_classes` (`Test*`), or a unittest TestCase of any name."""
    bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
    return node.name.startswith("Test") or any(b.endswith("TestCase") for b in bases)
