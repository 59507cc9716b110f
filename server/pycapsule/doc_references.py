"""What documentation examples refer to, as the dotted names of the project's modules define them.

`Namespace` follows the names a text file's examples bind, in order, in the one namespace pytest runs the
file in: `import pkg.mod` binds `pkg`, `import pkg.mod as m` binds `m`, `from pkg.mod import f as g` binds
`g` to `pkg.mod.f`, `from pkg.mod import *` lets any unbound name be one of `pkg.mod`'s, `g = f` makes an
alias and any other assignment unbinds. Each example gives the dotted names its code reads (`g(1)` reads
`pkg.mod.f`, `pkg.mod.f(1)` reads `pkg`, `pkg.mod` and `pkg.mod.f`) and the attribute names it uses.

`Modules` says where a dotted name is defined, following re-exports: `pkg.f` is `pkg.mod.f` when
`pkg/__init__.py` has `from .mod import f` (or `from .mod import *`). Everything is read with `ast` from the
files under the project's source roots; nothing is imported or run.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

from pycapsule.parsing import parse_source

MAX_HOPS = 8
"""Re-exports followed for one name (a cycle of them ends there)."""


@dataclass(frozen=True)
class ModuleNames:
    """The names a module's top-level code binds, read from its text."""

    defined: frozenset[str]
    """Functions, classes and assigned names it defines itself."""
    imported: dict[str, str] = field(default_factory=dict)
    """Names it imports, as absolute dotted names ('f' -> 'pkg.mod.f', 'mod' -> 'pkg.mod')."""
    stars: tuple[str, ...] = ()
    """Modules it imports `*` from."""


def module_names(source: str, dotted: str, is_package: bool) -> ModuleNames:
    """The names the module `dotted` binds at its top level (inside `if` and `try` blocks too)."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return ModuleNames(frozenset())
    package = dotted if is_package else dotted.rpartition(".")[0]
    defined: set[str] = set()
    imported: dict[str, str] = {}
    stars: list[str] = []
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imported[alias.asname] = alias.name
                else:
                    imported.setdefault(alias.name.partition(".")[0], alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            if base is None:
                continue
            for alias in node.names:
                if alias.name == "*":
                    stars.append(base)
                else:
                    imported[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value.id if isinstance(node.value, ast.Name) else None
            for target in targets:
                if isinstance(target, ast.Name):
                    if value is not None and value in imported:
                        imported[target.id] = imported[value]
                    elif value is not None and value in defined:
                        imported[target.id] = f"{dotted}.{value}"
                    else:
                        defined.add(target.id)
    return ModuleNames(frozenset(defined), imported, tuple(stars))


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, with those of its top-level `if`, `try` and `with` blocks."""
    found: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            found += _top_level(node.body) + _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            found += _top_level(node.body) + _top_level(node.orelse) + _top_level(node.finalbody)
            for handler in node.handlers:
                found += _top_level(handler.body)
        elif isinstance(node, ast.With):
            found += _top_level(node.body)
        else:
            found.append(node)
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    """The module a `from ... import` names, relative levels resolved against `package`."""
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])]) or None


@functools.lru_cache(maxsize=512)
def _read(path: str, mtime_ns: int, size: int, dotted: str, is_package: bool) -> ModuleNames:
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ModuleNames(frozenset())
    return module_names(source, dotted, is_package)


class Modules:
    """The project's modules under its source roots (`roots`, searched in order, as sys.path is)."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        self.roots = roots
        self._files: dict[str, Path | None] = {}

    def file(self, dotted: str) -> Path | None:
        """The module's file (a package's `__init__.py`), or None when no root has it."""
        if dotted not in self._files:
            parts = dotted.split(".")
            found = None
            if all(part.isidentifier() for part in parts):
                for root in self.roots:
                    for candidate in (root.joinpath(*parts[:-1], parts[-1] + ".py"),
                                      root.joinpath(*parts, "__init__.py")):
                        if candidate.is_file():
                            found = candidate
                            break
                    if found is not None:
                        break
            self._files[dotted] = found
        return self._files[dotted]

    def names(self, dotted: str) -> ModuleNames | None:
        path = self.file(dotted)
        if path is None:
            return None
        try:
            stat = path.stat()
        except OSError:
            return None
        return _read(str(path), stat.st_mtime_ns, stat.st_size, dotted, path.name == "__init__.py")

    def canonical(self, dotted: str, hops: int = 0) -> str:
        """Where `dotted` is defined: 'pkg.f' -> 'pkg.mod.f' when the package re-exports `f` from its
        module `mod`; `dotted` itself when it is defined where it says, or not known."""
        parts = dotted.split(".")
        cut = next((n for n in range(len(parts), 0, -1) if self.file(".".join(parts[:n])) is not None), 0)
        if cut in (0, len(parts)) or hops >= MAX_HOPS:
            return dotted
        module, name, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1:]
        names = self.names(module)
        if names is None or name in names.defined:
            return dotted
        target = names.imported.get(name)
        if target is None:
            target = next((f"{star}.{name}" for star in reversed(names.stars) if self._binds(star, name)),
                          None)
        if target is None:
            return dotted
        return self.canonical(".".join([target, *rest]), hops + 1)

    def _binds(self, module: str, name: str) -> bool:
        names = self.names(module)
        return names is not None and not name.startswith("_") and (
            name in names.defined or name in names.imported or bool(names.stars))


@dataclass(frozen=True)
class Uses:
    """What one example's code reads."""

    names: frozenset[str]
    """Dotted names, as bound in the file (not yet followed through re-exports)."""
    attributes: frozenset[str]
    """Every attribute name it uses (`x.m(...)` uses 'm')."""


class Namespace:
    """The names a text file's examples have bound so far (one namespace for the whole file)."""

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}
        self.stars: list[str] = []

    def run(self, tree: ast.Module) -> Uses:
        """What the example `tree` reads, then the names it binds (each statement in turn)."""
        names: set[str] = set()
        attributes: set[str] = set()
        for statement in tree.body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Attribute):
                    attributes.add(node.attr)
                dotted = self._chain(node)
                if dotted is not None:
                    names.update(dotted)
            self._bind(statement)
        return Uses(frozenset(names), frozenset(attributes))

    def _chain(self, node: ast.AST) -> list[str] | None:
        """The dotted names a name or attribute chain reads (`m.f.x`: m's, then with '.f', '.f.x')."""
        attributes: list[str] = []
        while isinstance(node, ast.Attribute):
            attributes.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            return None
        bases = [self.bound[node.id]] if node.id in self.bound else \
            [f"{star}.{node.id}" for star in self.stars]
        return [".".join([base, *attributes[:n]]) for base in bases for n in range(len(attributes) + 1)]

    def _bind(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    self.bound[alias.asname] = alias.name
                else:
                    top = alias.name.partition(".")[0]
                    self.bound[top] = top
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            for alias in statement.names:
                if alias.name == "*":
                    self.stars.append(statement.module)
                else:
                    self.bound[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bound.pop(statement.name, None)  # the example defines a name of its own
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            alias = self._chain(statement.value) if statement.value is not None else None
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        if alias and isinstance(target, ast.Name):
                            self.bound[node.id] = alias[-1]
                        else:
                            self.bound.pop(node.id, None)
