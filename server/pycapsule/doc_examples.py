"""A function's documentation examples: the doctest blocks of the project's README and docs/ that call it.

Which files: `README.md`, `README.rst` or `README.txt` at the project root and the `.md`, `.rst` and `.txt`
files under its `docs/` folder (not entering hidden, virtual-environment or build folders, nor Sphinx's
`_build`; no change log: `CHANGE_LOGS`), at most MAX_FILES of them and none over MAX_FILE_BYTES. Each is
read as pytest's `--doctest-glob` reads a text file: the whole file is one doctest, parsed by the stdlib
`doctest.DocTestParser`, its examples run in order in one namespace of their own, with the project's
doctest option flags.

Which examples are the function's: a *block* is a run of examples with only blank lines between them (a
line of prose or a code fence ends it). A block is the function's when one of its examples (not skipped)
calls or names the function by a name bound to it in that namespace (`doc_references`: `from pkg.mod import
f`, `from pkg import f as g` when `pkg` re-exports it, `import pkg.mod` then `pkg.mod.f(...)`); for a method
`C.m`, one that uses `.m` once the file has named the class. Every example of those blocks is judged. The
file's examples before the last of them run too, unjudged: they set up the namespace as they do under
pytest (a `>>> from pkg.mod import f` near the top), and another function's block is not charged to this
one. Examples after the last of them do not run.
"""

from __future__ import annotations

import ast
import doctest
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import definitions, parse_module
from pycapsule.config import project_root
from pycapsule.doc_references import Modules, Namespace
from pycapsule.parsing import parse_source
from pycapsule.project import ModuleImport, module_import
from pycapsule.project_tests import never_entered
from pycapsule.sandbox.api import DoctestItem

DOC_SUFFIXES = (".md", ".rst", ".txt")
DOCS_FOLDER = "docs"
NOT_DOCS = ("_build",)
"""Folders under docs/ that hold no sources: Sphinx's output copies every page there as a `.txt`."""
CHANGE_LOGS = frozenset({"changelog", "changes", "history", "news", "versions", "releases", "release-notes",
                         "release_notes", "whatsnew", "whats-new", "whats_new"})
"""Names (a file's stem, a folder's name, any case) of change logs: their examples show how a function behaved
in some release, often not as a doctest would run them (object addresses, comments as output)."""
MAX_FILES = 300
MAX_FILE_BYTES = 512 * 1024
PLACES_SHOWN = 3


@dataclass(frozen=True)
class _Example:
    line: int
    """1-based line of its '>>>' in the file."""
    block: int
    source: str
    want: str
    skipped: bool
    tree: ast.Module | None
    """Its code, parsed (None: not Python the parser reads, e.g. a syntax error the example shows)."""
    end: int
    """How many of the file's lines reach to the end of its expected output."""


@dataclass(frozen=True)
class DocExamples:
    """One documentation file's examples of one function."""

    path: str
    """From the project root, with '/': 'README.md', 'docs/usage.rst'."""
    text: str
    """The file up to the end of the last of these examples (nothing after it runs), its lines numbered as
    in the file."""
    judged: tuple[int, ...]
    """The lines of the '>>>' of the examples that count (`DoctestItem.judged`)."""
    examples: int
    """How many of those run (not skipped)."""
    blocks: tuple[int, ...]
    """The first line of each block of them."""
    shown: str
    """Those examples as doctest text, for the prompt."""

    def item(self, qualname: str) -> DoctestItem:
        """The file as the sandbox runs it, reported as `qualname`'s."""
        return DoctestItem(qualname, self.text, 1, document=self.path, judged=self.judged)

    @property
    def places(self) -> tuple[str, ...]:
        """'README.md:12' for each block."""
        return tuple(f"{self.path}:{line}" for line in self.blocks)


def doc_examples(path: Path | None, qualname: str, root: Path | None = None, source: str | None = None
                 ) -> tuple[DocExamples, ...]:
    """The documentation examples of the function `qualname` of the module at `path` (whose text is
    `source`), README first, then docs/ by path; () for a file outside any project, or a function the
    documentation cannot call (`functions`)."""
    return examples_in_file(path, (qualname,), root, source).get(qualname, ())


def examples_in_file(path: Path | None, qualnames: tuple[str, ...], root: Path | None = None,
                     source: str | None = None) -> dict[str, tuple[DocExamples, ...]]:
    """The documentation examples of each of `qualnames` (functions of the module at `path`, whose text is
    `source`, read from `path` when None) that has some."""
    if path is None or (root := root or project_root(path)) is None:
        return {}
    module = module_import(path, root)
    if source is None:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
    return examples_in_source(module, source, qualnames)


def examples_in_source(module: ModuleImport, source: str, qualnames: tuple[str, ...] | None
                       ) -> dict[str, tuple[DocExamples, ...]]:
    """The documentation examples of each function among `qualnames` (None: all) of `module`, whose text
    is `source` (`functions`: the ones documentation can call)."""
    files = _example_files(module.root)
    texts = [text for _, (text, _) in files]
    if not files or (qualnames is not None
                     and not any(q.rpartition(".")[2] in text for q in qualnames for text in texts)):
        return {}  # the module's text is parsed only when some documentation may call one of them
    return _by_function(module, functions(source, qualnames), files)


@functools.lru_cache(maxsize=16)
def functions(source: str, qualnames: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The module's functions and methods (among `qualnames`; None: all) that a documentation example can
    call: not a class, nor a function nested in another; () when the text is not Python."""
    try:
        found = [d.qualname for d in definitions(parse_module(source))
                 if not d.in_function and not isinstance(d.node, ast.ClassDef)]
    except (SyntaxError, ValueError):
        return ()
    return tuple(name for name in dict.fromkeys(found) if qualnames is None or name in qualnames)


_Read = tuple[str, tuple[_Example, ...]]
"""A documentation file's text and its examples."""


def _example_files(root: Path) -> list[tuple[Path, _Read]]:
    """The documentation files with examples, read (and parsed once per version)."""
    return [(file, parsed) for file in doc_files(root) if (parsed := _read(file)) is not None and parsed[1]]


def _by_function(module: ModuleImport, qualnames: tuple[str, ...], files: list[tuple[Path, _Read]]
                 ) -> dict[str, tuple[DocExamples, ...]]:
    """The documentation examples of each of `qualnames` (functions of `module`) that has some."""
    modules = Modules(module.import_paths)
    found: dict[str, tuple[DocExamples, ...]] = {}
    for qualname in dict.fromkeys(qualnames):
        if qualname.count(".") > 1:
            continue
        name = qualname.rpartition(".")[2]
        results: list[DocExamples] = []
        for file, (text, examples) in files:
            if name not in text:
                continue
            chosen = _blocks_of(examples, modules, f"{module.name}.{qualname}", "." in qualname)
            if chosen:
                results.append(_examples_of(file.relative_to(module.root).as_posix(), text, examples, chosen))
        if results:
            found[qualname] = tuple(results)
    return found


def documentation_root(path: Path | None) -> Path | None:
    """The folder a documentation example's path (`ExampleFailure.document`) is relative to."""
    if path is None or (root := project_root(path)) is None:
        return None
    return module_import(path, root).root


def documents_module(path: Path, root: Path | None = None) -> bool:
    """Whether any documentation example names something the module at `path` defines (check runs a
    folder's files without examples of their own only then)."""
    root = root or project_root(path)
    if root is None:
        return False
    module = module_import(path, root)
    files = tuple((str(file), *_stamp(file)) for file in doc_files(module.root))
    modules = Modules(module.import_paths)
    prefix = module.name + "."
    inside = (name[len(prefix):].partition(".")[0] for name in _names_read(files, module.import_paths)
              if name.startswith(prefix))
    return any(modules.file(f"{module.name}.{name}") is None for name in inside)  # not a submodule's


def describe(docs: tuple[DocExamples, ...]) -> str:
    """'3 documentation examples (README.md:12, docs/usage.rst:8)'; '' for none."""
    count = sum(doc.examples for doc in docs)
    if not docs:
        return ""
    places = [place for doc in docs for place in doc.places]
    listed = ", ".join(places[:PLACES_SHOWN])
    if len(places) > PLACES_SHOWN:
        listed += f" and {len(places) - PLACES_SHOWN} more"
    return f"{count} documentation example{'' if count == 1 else 's'} ({listed})"


def prompt_text(docs: tuple[DocExamples, ...], limit: int = 1500) -> str:
    """The examples as the prompt shows them, each file's under its place, within `limit` characters."""
    parts: list[str] = []
    used = 0
    for doc in docs:
        part = f"# {doc.places[0]}\n{doc.shown}"
        if used + len(part) > limit:
            break
        parts.append(part)
        used += len(part)
    return "\n".join(parts)


def fingerprint(docs: tuple[DocExamples, ...]) -> str:
    """Changes whenever what the examples run changes (a cached result of them is then stale)."""
    digest = hashlib.sha256()
    for doc in docs:
        digest.update(f"{doc.path}\0{doc.judged}\0{doc.text}\0".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def doc_files(root: Path) -> list[Path]:
    """README.{md,rst,txt} at `root`, then the documentation files under root/docs, by path."""
    found = [root / f"README{suffix}" for suffix in DOC_SUFFIXES if (root / f"README{suffix}").is_file()]
    docs = root / DOCS_FOLDER
    pages: list[Path] = []
    if docs.is_dir() and not docs.is_symlink():
        for folder, folders, files in os.walk(docs):
            base = Path(folder)
            folders[:] = sorted(f for f in folders if f not in NOT_DOCS and f.lower() not in CHANGE_LOGS
                                and not never_entered(base / f))
            pages += [base / name for name in files
                      if name.endswith(DOC_SUFFIXES) and Path(name).stem.lower() not in CHANGE_LOGS]
            if len(pages) >= MAX_FILES:
                break
    found += sorted(pages, key=lambda page: page.relative_to(root).as_posix())[:MAX_FILES]
    return [file for file in found if _small(file)]


def _small(file: Path) -> bool:
    try:
        return file.is_file() and file.stat().st_size <= MAX_FILE_BYTES
    except OSError:
        return False


def _stamp(file: Path) -> tuple[int, int]:
    try:
        stat = file.stat()
    except OSError:
        return 0, 0
    return stat.st_mtime_ns, stat.st_size


def _read(file: Path) -> _Read | None:
    return _parsed(str(file), *_stamp(file))


@functools.lru_cache(maxsize=256)
def _parsed(path: str, mtime_ns: int, size: int) -> _Read | None:
    """The file's text and its examples (None: unreadable, or not valid doctest: pytest would fail it)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if ">>>" not in text:
        return text, ()
    try:
        pieces = doctest.DocTestParser().parse(text, path)
    except ValueError:
        return None
    examples: list[_Example] = []
    block = 0
    for piece in pieces:
        if isinstance(piece, str):
            block += bool(piece.strip()) and bool(examples)
            continue
        try:
            tree: ast.Module | None = parse_source(piece.source)
        except (SyntaxError, ValueError):
            tree = None
        skipped = bool(piece.options.get(doctest.SKIP))
        end = piece.lineno + piece.source.count("\n") + piece.want.count("\n")
        examples.append(_Example(piece.lineno + 1, block, piece.source, piece.want, skipped, tree, end))
    return text, tuple(examples)


def _blocks_of(examples: tuple[_Example, ...], modules: Modules, target: str, method: bool) -> set[int]:
    """The blocks with an example (not skipped) that calls or names `target` ('pkg.mod.f', 'pkg.mod.C.m')."""
    namespace = Namespace()
    owner, _, name = target.rpartition(".")
    owner_named = False
    chosen: set[int] = set()
    for example in examples:
        if example.tree is None:
            continue
        uses = namespace.run(example.tree)
        canonical = {modules.canonical(dotted) for dotted in uses.names}
        owner_named = owner_named or (method and owner in canonical)
        uses_it = target in canonical or (method and owner_named and name in uses.attributes)
        if uses_it and not example.skipped:
            chosen.add(example.block)
    return chosen


def _examples_of(path: str, text: str, examples: tuple[_Example, ...], blocks: set[int]) -> DocExamples:
    judged = [example for example in examples if example.block in blocks]
    firsts = tuple(dict.fromkeys(
        next(e.line for e in judged if e.block == block) for block in sorted(blocks)))
    shown = "".join(f">>> {_continued(e.source)}{e.want}" for e in judged)
    kept = "".join(line + "\n" for line in text.split("\n")[:judged[-1].end])  # doctest's lines end in "\n"
    return DocExamples(path, kept, tuple(e.line for e in judged), sum(not e.skipped for e in judged), firsts,
                       shown)


def _continued(source: str) -> str:
    """An example's source as doctest writes it: its later lines after '... '."""
    first, *rest = source.rstrip("\n").split("\n")
    return "".join([first + "\n", *(f"... {line}\n" for line in rest)])


@functools.lru_cache(maxsize=64)
def _names_read(files: tuple[tuple[str, int, int], ...], roots: tuple[Path, ...]) -> frozenset[str]:
    """Every dotted name the files' examples read, followed to where it is defined."""
    modules = Modules(roots)
    found: set[str] = set()
    for path, mtime_ns, size in files:
        parsed = _parsed(path, mtime_ns, size)
        if parsed is None:
            continue
        namespace = Namespace()
        for example in parsed[1]:
            if example.tree is not None:
                found |= {modules.canonical(dotted) for dotted in namespace.run(example.tree).names}
    return frozenset(found)
