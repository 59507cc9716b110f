"""The open documents, parsed once per version: a cheap outline for the requests editors send on
every cursor move (code actions, hover), full capsules only when a run or a doctest check needs them.

The outline is one `ast.parse` (no tokenizing, no doctest parsing), which keeps a code action on
a freshly edited 3,000-line module within its latency budget.

`Documents` owns the latest parse of each document; the text itself is pygls' workspace's (kept in step
with the editor's `didOpen`/`didChange`/`didClose`).
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from pycapsule.capsule import (
    Capsule,
    CapsuleError,
    definitions,
    docstring_node,
    is_stub_statement,
    parse_module,
    read_capsules,
)
from pycapsule.lsp.positions import LineIndex
from pycapsule.parsing import parse_source

_DEF_KEYWORD = re.compile(r"(?:async\s+)?def\s+")
_NEXT_LINE = re.compile(r"\r\n|\r|\n")
_DEFINITION_START = re.compile(r"@|def\s|async\s+def\s|class\s")


@dataclass(frozen=True)
class CapsuleOutline:
    qualname: str
    name: str
    first_line: int
    """1-based, the first decorator's line (as Capsule.def_line)."""
    end_line: int
    name_line: int
    """0-based line of the name in the `def` line."""
    name_column: int
    """Column of the name, in characters."""
    is_stub: bool


def _outline(module: ast.Module, index: LineIndex) -> tuple[CapsuleOutline, ...]:
    """Every function, found by the walker check, generate and the sandbox use (pycapsule.capsule)."""
    return tuple(_function(d.node, d.qualname, index) for d in definitions(module)
                 if isinstance(d.node, ast.FunctionDef | ast.AsyncFunctionDef))


def _function(
    node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, index: LineIndex
) -> CapsuleOutline:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    text = index.line_text(node.lineno - 1)
    keyword = _DEF_KEYWORD.match(text, len(text) - len(text.lstrip()))  # a `def` only follows indentation
    column = keyword.end() if keyword else max(text.find(node.name), 0)
    rest = node.body[1:] if docstring_node(node) is not None else node.body
    return CapsuleOutline(
        qualname=qualname,
        name=node.name,
        first_line=first,
        end_line=node.end_lineno or node.lineno,
        name_line=node.lineno - 1,
        name_column=column,
        is_stub=all(is_stub_statement(statement) for statement in rest),
    )


@dataclass
class ParsedDocument:
    uri: str
    version: int | None
    text: str
    path: Path | None
    index: LineIndex
    outline: tuple[CapsuleOutline, ...]
    syntax_error: CapsuleError | None
    _capsules: tuple[Capsule, ...] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def outline_at_line(self, line0: int) -> CapsuleOutline | None:
        """The innermost function whose lines (decorators to last body line) hold the 0-based line."""
        return innermost(self.outline, line0)

    def outline_named_at(self, line0: int, character: int) -> CapsuleOutline | None:
        for function in self.outline:
            if (
                function.name_line == line0
                and function.name_column <= character <= function.name_column + len(function.name)
            ):
                return function
        return None

    def outline_of(self, qualname: str) -> CapsuleOutline | None:
        return next((f for f in self.outline if f.qualname == qualname), None)

    def capsules(self) -> tuple[Capsule, ...]:
        """The full capsules (tokenized headers, doctest examples); computed once, thread-safe."""
        with self._lock:
            if self._capsules is None:
                self._capsules = (
                    tuple(read_capsules(self.text, self.path)) if self.syntax_error is None else ()
                )
            return self._capsules

    def capsule(self, qualname: str) -> Capsule | None:
        return next((c for c in self.capsules() if c.qualname == qualname), None)


def innermost(outline: tuple[CapsuleOutline, ...], line0: int) -> CapsuleOutline | None:
    """The innermost function of `outline` whose lines (decorators to last body line) hold the 0-based
    line."""
    line = line0 + 1
    inside = [f for f in outline if f.first_line <= line <= f.end_line]
    return max(inside, key=lambda f: f.first_line, default=None)


_LINE_TEXT = re.compile(r"[^\r\n]*")
_LAST_STATEMENT = re.compile(r"(?s:.*)(?:\A|[\r\n])(?=[^\s#])")
"""Up to the start of the last line before `endpos` that starts a statement: not indented, not a comment."""
_NEXT_STATEMENT = re.compile(r"(?:\r\n|\r|\n)(?=[^\s#])")


def _line_start(text: str, line0: int) -> int | None:
    """The offset of the 0-based line (None: past the text's last line), without indexing every line."""
    if line0 == 0:
        return 0
    lines = r"(?:[^\r\n]*+(?:\r\n?|\n))" if "\r" in text else r"(?:[^\n]*+\n)"  # the second 4 x faster
    found = re.compile(rf"{lines}{{{line0}}}").match(text)
    return found.end() if found else None


def _line_before(text: str, start: int) -> int:
    """The offset of the line before the one at `start` (> 0)."""
    end = start - (2 if text[max(start - 2, 0) : start] == "\r\n" else 1)
    return max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1


def line_ends(text: str, start: int, end: int) -> int:
    """How many lines end between the offsets `start` and `end` (LSP's line ends)."""
    returns = text.count("\r", start, end)
    return text.count("\n", start, end) + returns - (text.count("\r\n", start, end) if returns else 0)


def local_outline(text: str, line0: int) -> tuple[CapsuleOutline, ...] | None:
    """The functions of the top-level definition holding `line0`, parsed on their own: what a code
    action right after an edit needs, at a fraction of a whole-module parse, and without indexing the whole
    text's lines. None when the definition cannot be isolated (the caller then parses the whole module)."""
    first = _line_start(text, line0)
    statement = _LAST_STATEMENT.match(text, 0, first + 1) if first is not None else None
    if first is None or statement is None:
        return None
    start = statement.end()
    while start > 0 and text.startswith("@", before := _line_before(text, start)):
        start = before
    if not _DEFINITION_START.match(_LINE_TEXT.match(text, start).group()):
        return None
    header = start
    while text.startswith("@", header) and (after := _NEXT_LINE.search(text, header)) is not None:
        header = after.end()
    following = _NEXT_STATEMENT.search(text, max(header, first))
    chunk = text[start : following.end() if following else len(text)]
    try:
        module = parse_source(chunk)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    above = line0 - line_ends(text, start, first)  # the lines above the chunk
    return tuple(_moved(function, above) for function in _outline(module, LineIndex(chunk)))


def _moved(function: CapsuleOutline, lines: int) -> CapsuleOutline:
    return replace(function, first_line=function.first_line + lines, end_line=function.end_line + lines,
                   name_line=function.name_line + lines)


def document_path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def parse_text(uri: str, version: int | None, text: str, codec: PositionCodec) -> ParsedDocument:
    index = LineIndex(text, codec)
    try:
        module, error = parse_module(text), None
    except CapsuleError as exc:
        module, error = None, exc
    outline = _outline(module, index) if module is not None else ()
    return ParsedDocument(uri, version, text, document_path(uri), index, outline, error)


class Documents:
    """The latest parse of each document, reused while its version and text stay the same."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._latest: dict[str, ParsedDocument] = {}

    def parsed(self, uri: str) -> ParsedDocument:
        """The whole document, parsed; a file that is not open is read from disk (may raise OSError)."""
        document = self._server.workspace.get_text_document(uri)
        text = document.source
        cached = self._latest.get(uri)
        if cached is not None and cached.version == document.version and cached.text == text:
            return cached
        parsed = parse_text(uri, document.version, text, self._server.workspace.position_codec)
        self._latest[uri] = parsed
        return parsed

    def current(self, uri: str, text: str) -> ParsedDocument | None:
        """The whole document's parse, when the latest one is of `text` (nothing is parsed)."""
        cached = self._latest.get(uri)
        return cached if cached is not None and cached.text == text else None

    def near(self, uri: str, line0: int) -> ParsedDocument:
        """For requests about one position: the latest parse when it is current, else only the
        definition around `line0` (falling back to a whole parse when that cannot be isolated).
        `outline` then holds the functions around `line0`; `syntax_error` may be unknown (None)."""
        document = self._server.workspace.get_text_document(uri)
        text = document.source
        cached = self._latest.get(uri)
        if cached is not None and cached.version == document.version and cached.text == text:
            if cached.syntax_error is None:
                return cached
            # A syntax error elsewhere: the definition around `line0` may still parse on its own,
            # and the answer must not depend on whether the whole module was parsed before.
            outline = local_outline(text, line0) or ()
            return ParsedDocument(
                cached.uri, cached.version, text, cached.path, cached.index, outline, cached.syntax_error
            )
        index = LineIndex(text, self._server.workspace.position_codec)
        outline = local_outline(text, line0)
        if outline is None:
            return self.parsed(uri)
        return ParsedDocument(uri, document.version, text, document_path(uri), index, outline, None)

    def forget(self, uri: str) -> None:
        self._latest.pop(uri, None)
