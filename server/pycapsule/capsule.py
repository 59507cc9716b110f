"""A capsule: one target function in its module, with the exact text region its body occupies.

Everything here is computed from the syntax tree (`ast`) plus `tokenize` for the few byte
positions the tree does not give (the colon that ends a `def` header). Offsets are character
offsets into `module_source`; lines are 1-based as in tracebacks, except `capsule_at`, which
takes the 0-based position an editor sends.

The replaceable body region is whole lines: from the start of the line after the docstring (or
after the header when there is none) to the end of the function's last statement line, its line
ending included. Comments between the docstring and the first statement belong to the body.
When the body shares the header's line (`def f(): return 1`) the region starts right after the
colon instead, and a splice moves the body (and any docstring, byte for byte) onto its own lines.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import difflib
import doctest
import io
import os
import re
import tempfile
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pycapsule.parsing import parse_source

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class CapsuleError(ValueError):
    """The module cannot be read as Python, or the target function is not in it."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __reduce__(self) -> tuple[type[CapsuleError], tuple[str, int | None]]:
        return type(self), (self.message, self.line)  # pickled with its line (the engine's process sends it)


@dataclass(frozen=True)
class Example:
    source: str
    """The example's code without the '>>> ' prompts, e.g. 'add(1, 2)\\n'."""
    want: str
    """The expected output, as doctest reads it."""
    line: int
    """1-based line of the example's '>>>' in the module."""
    skipped: bool = False
    """Marked `+SKIP`: shown, never run, so it verifies nothing."""


@dataclass(frozen=True)
class Capsule:
    path: Path | None
    module_source: str
    qualname: str
    """'f', 'C.m', 'outer.inner' (no '<locals>')."""
    name: str
    is_async: bool
    header: str
    """Decorators and def line(s), verbatim, from the start of the first decorator's line to the colon."""
    docstring: str | None
    """The docstring's value (uncleaned, as `__doc__` holds it)."""
    examples: tuple[Example, ...]
    doctest_error: str | None
    """One sentence when the docstring's doctests cannot be parsed."""
    body_start: int
    body_end: int
    indent: str
    """The indentation of the body's statements."""
    newline: str
    """The line ending the splice uses: '\\n' or '\\r\\n' (or '\\r')."""
    is_stub: bool
    def_line: int
    """1-based line of the first decorator (or of the def when there is none)."""
    end_line: int
    """1-based last line of the function."""
    header_start: int = 0
    """Character offset where `header` starts (the start of the first decorator's line)."""
    docstring_start: int | None = None
    docstring_end: int | None = None
    """Character offsets of the docstring literal, quotes included."""
    inline_body: bool = False
    """True when the body (or docstring) starts on the header's line: the region starts after the colon."""
    indent_unit: str = "    "
    """One level of indentation in this module ('    ', '\\t', ...)."""
    top_level_start: int = 0
    """Character offset of the start of the line of the module-level statement holding this function."""

    @property
    def body(self) -> str:
        """The current body's text as whole, indented lines (empty for a docstring-only stub)."""
        text = self.module_source[self.body_start : self.body_end]
        if self.body_start == 0 or self.module_source[self.body_start - 1] in "\r\n":
            return text
        # The body shares a line with the header or the docstring: present it as its own lines.
        if self.inline_body and self.docstring_end is not None:
            text = self.module_source[self.docstring_end : self.body_end]
        statements = text.strip(" \t\r\n;")
        return f"{self.indent}{statements}{self.newline}" if statements else ""

    @property
    def verified_by_doctests(self) -> bool:
        """False when no example checks the function, so a result must say 'not verified': none runs (all
        `+SKIP`), or each that runs only sets up (no expected output, and neither the function's name nor
        its class's is in it, like `>>> names = [...]` before a skipped call)."""
        alternatives = "|".join(map(re.escape, {self.name, *self.class_names}))
        names = re.compile(rf"\b(?:{alternatives})\b")
        return self.doctest_error is None and any(
            not e.skipped and (e.want.strip() or names.search(e.source)) for e in self.examples)

    @property
    def class_names(self) -> tuple[str, ...]:
        """The enclosing scopes of the function, outermost first ('C' for 'C.m')."""
        return tuple(self.qualname.split(".")[:-1])


@dataclass(frozen=True)
class SourceFile:
    text: str
    """Decoded text with its line endings untouched."""
    encoding: str
    """The encoding to write it back with (from the coding cookie or BOM; 'utf-8' by default)."""


def read_source_file(path: Path, data: bytes | None = None) -> SourceFile:
    """Read a Python file honouring its coding cookie or BOM, keeping LF/CRLF exactly (`data`: its bytes,
    already read)."""
    data = Path(path).read_bytes() if data is None else data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise CapsuleError(f"{path} cannot be decoded: {_undecodable(data, error)}.") from None
    return SourceFile(text=text, encoding=encoding)


def _undecodable(data: bytes, error: Exception) -> str:
    """Why `data` is not text, in words: the first byte its encoding rejects and its line, or the coding
    comment's problem (tokenize calls bytes that are not UTF-8 "invalid or missing encoding declaration")."""
    if not isinstance(error, UnicodeDecodeError):
        try:
            data.decode("utf-8")
            return str(error)  # an unknown encoding, or a coding comment that contradicts the BOM
        except UnicodeDecodeError as not_utf8:
            error = not_utf8
    line = data.count(b"\n", 0, error.start) + 1
    return (f"byte 0x{data[error.start]:02x} on line {line} is not {error.encoding.upper()} (save the file "
            "as UTF-8, or name its encoding in a coding comment)")


class FileChangedError(Exception):
    """The file is no longer what was read: writing would lose what changed on disk meanwhile."""


def write_source_file(path: Path, source: SourceFile, expected: bytes | None = None) -> None:
    """Replace `path` by `source` in the encoding it was read with (no newline translation), atomically (a
    temporary file beside it, renamed over it) and keeping its mode; unless its bytes are no longer
    `expected` (FileChangedError)."""
    path = Path(path)
    data = codecs.encode(source.text, source.encoding)
    if expected is not None and path.read_bytes() != expected:
        raise FileChangedError("it changed on disk while generating; run again")
    mode = path.stat().st_mode if path.exists() else None
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pycapsule", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class SourceLines:
    """Line starts of a text and conversion from ast positions (UTF-8 byte columns) to offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Only \n, \r\n and \r end lines for Python's tokenizer (str.splitlines knows more).
        starts = [0]
        starts.extend(match.end() for match in _LINE_BREAK.finditer(text))
        self.starts = starts

    def start(self, line: int) -> int:
        """Offset of the start of 1-based `line` (len(text) past the end)."""
        if line - 1 < len(self.starts):
            return self.starts[line - 1]
        return len(self.text)

    def end(self, line: int) -> int:
        """Offset just after `line`'s line ending (or the end of the text)."""
        return self.start(line + 1)

    def content_end(self, line: int) -> int:
        """Offset of `line`'s line ending (its last character otherwise)."""
        end = self.end(line)
        while end > self.start(line) and self.text[end - 1] in "\r\n":
            end -= 1
        return end

    def line_text(self, line: int) -> str:
        return self.text[self.start(line) : self.content_end(line)]

    def offset(self, line: int, byte_column: int) -> int:
        text = self.line_text(line)
        if text.isascii():
            return self.start(line) + byte_column
        return self.start(line) + len(text.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    def line_of(self, offset: int) -> int:
        """1-based line containing `offset`."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low + 1

    def newline_of(self, line: int) -> str | None:
        ending = self.text[self.content_end(line) : self.end(line)]
        return ending or None


def _leading_whitespace(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t\f"))]


def nul_byte_line(source: str) -> int | None:
    """The line of the first NUL character, which no Python source may hold (older 3.11s raise
    ValueError for it, newer ones a SyntaxError without a line)."""
    index = source.find("\0")
    return None if index < 0 else source.count("\n", 0, index) + 1


def parse_module(source: str) -> ast.Module:
    """ast.parse with a one-sentence CapsuleError instead of a SyntaxError."""
    line = nul_byte_line(source)
    if line is not None:
        raise CapsuleError(f"The module has a syntax error at line {line}: a NUL byte.", line)
    try:
        return parse_source(source)
    except SyntaxError as error:
        line = error.lineno
        where = f" at line {line}" if line else ""
        raise CapsuleError(f"The module has a syntax error{where}: {error.msg}.", line) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise CapsuleError(f"The module cannot be parsed: {error or type(error).__name__}.") from None


_BLOCKS = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match,
)


@dataclass(frozen=True)
class Definition:
    qualname: str
    """'f', 'C.m', 'outer.inner', 'C' (no '<locals>')."""
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    top: ast.stmt
    """The module-level statement that holds it."""
    in_function: bool
    """Defined inside a function's body: not an attribute of the module or a class at run time."""


def definitions(module: ast.Module) -> list[Definition]:
    """Every function and class, in source order: the one walker every part of pycapsule uses."""
    found: list[Definition] = []

    def visit(statements: list[ast.stmt], prefix: str, top: ast.stmt | None, in_function: bool) -> None:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualname = f"{prefix}{statement.name}"
                found.append(Definition(qualname, statement, top or statement, in_function))
                is_function = not isinstance(statement, ast.ClassDef)
                visit(statement.body, f"{qualname}.", top or statement, in_function or is_function)
            elif isinstance(statement, _BLOCKS):
                # Definitions under if/try/with/for/while/match keep their enclosing scope's prefix.
                holder = top or statement
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(statement, field, None) or [], prefix, holder, in_function)
                for handler in getattr(statement, "handlers", None) or []:
                    visit(handler.body, prefix, holder, in_function)
                for case in getattr(statement, "cases", None) or []:
                    visit(case.body, prefix, holder, in_function)

    visit(module.body, "", None, False)
    return found


def _functions(module: ast.Module) -> list[tuple[str, _FunctionNode, ast.stmt]]:
    """(qualname, node, top-level statement holding it) for every function, in source order."""
    return [(d.qualname, d.node, d.top) for d in definitions(module)
            if isinstance(d.node, ast.FunctionDef | ast.AsyncFunctionDef)]


def is_stub_statement(statement: ast.stmt) -> bool:
    """`...`, `pass`, or `raise NotImplementedError` / `raise NotImplementedError(...)`."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr):
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return body[0]
    return None


def header_colon_end(lines: SourceLines, node: _FunctionNode, body_first: ast.stmt) -> int:
    """Offset just after the ':' that ends the def header (the last depth-0 colon before the body)."""
    start = lines.offset(node.lineno, node.col_offset)
    stop = lines.offset(body_first.lineno, body_first.col_offset)
    fragment = lines.text[start:stop]
    fragment_lines = SourceLines(fragment)
    depth = 0
    colon_end: int | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(fragment).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
            elif token.string == ":" and depth == 0:
                row, column = token.end
                colon_end = fragment_lines.start(row) + column
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # The fragment ends mid-body by construction; the colon has been seen by then.
    if colon_end is None:  # pragma: no cover - ast guarantees a colon before the body
        raise CapsuleError(f"Cannot find the end of the header of {node.name}.", node.lineno)
    return start + colon_end


def indent_unit_of(module: ast.Module, lines: SourceLines) -> str:
    """The module's first indentation step, so a splice matches the file's style."""
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body or not isinstance(node, ast.stmt):
            continue
        if body[0].lineno <= node.lineno:
            continue
        outer = _leading_whitespace(lines.line_text(node.lineno))
        inner = _leading_whitespace(lines.line_text(body[0].lineno))
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    return "    "


def _module_newline(lines: SourceLines, line: int) -> str:
    own = lines.newline_of(line)
    if own:
        return own
    for number in range(1, len(lines.starts) + 1):
        ending = lines.newline_of(number)
        if ending:
            return ending
    return "\n"


def _examples(
    docstring: str, doc_node: ast.Expr, lines: SourceLines, qualname: str
) -> tuple[tuple[Example, ...], str | None]:
    """Doctest examples with module line numbers; a parse failure becomes one sentence."""
    try:
        parsed = doctest.DocTestParser().parse(docstring, qualname)
    except ValueError as error:
        return (), f"The doctests in the docstring of {qualname} cannot be parsed: {error}."
    found = [part for part in parsed if isinstance(part, doctest.Example)]
    first, last = doc_node.lineno, doc_node.end_lineno or doc_node.lineno
    if last - first == docstring.count("\n"):
        # The literal spans as many lines as its value: line numbers map one to one.
        return tuple(Example(e.source, e.want, first + e.lineno, _skipped(e)) for e in found), None
    # Escaped or joined newlines in the literal: find each prompt's line in the source instead.
    prompt_lines = [n for n in range(first, last + 1) if ">>>" in lines.line_text(n)]
    examples = []
    for index, example in enumerate(found):
        line = prompt_lines[index] if index < len(prompt_lines) else first
        examples.append(Example(example.source, example.want, line, _skipped(example)))
    return tuple(examples), None


def _skipped(example: doctest.Example) -> bool:
    return bool(example.options.get(doctest.SKIP))


def _capsule(
    source: str,
    path: Path | None,
    lines: SourceLines,
    qualname: str,
    node: _FunctionNode,
    top: ast.stmt,
    indent_unit: str,
) -> Capsule:
    first_line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    header_start = lines.start(first_line)
    header_end = header_colon_end(lines, node, node.body[0])
    header_line = lines.line_of(header_end)
    doc_node = docstring_node(node)
    rest = node.body[1:] if doc_node else node.body
    last = node.body[-1]
    end_line = last.end_lineno or last.lineno

    header_indent = _leading_whitespace(lines.line_text(node.lineno))
    inline = node.body[0].lineno == header_line
    if inline:
        body_start = header_end
        if "\t" in header_indent:
            indent_unit = "\t"
        indent = header_indent + indent_unit
    else:
        indent = _leading_whitespace(lines.line_text(node.body[0].lineno))
        if indent.startswith(header_indent) and len(indent) > len(header_indent):
            indent_unit = indent[len(header_indent) :]
        region_first = (doc_node.end_lineno or doc_node.lineno) + 1 if doc_node else header_line + 1
        if doc_node and rest and rest[0].lineno == doc_node.end_lineno:
            # `"""doc"""; return 1`: treat like an inline body after the docstring.
            body_start = lines.offset(doc_node.end_lineno or doc_node.lineno, doc_node.end_col_offset or 0)
        else:
            body_start = lines.start(region_first)
    body_end = lines.end(end_line) if rest or inline else body_start

    docstring = doc_node.value.value if doc_node else None  # type: ignore[attr-defined]
    examples: tuple[Example, ...] = ()
    doctest_error = None
    doc_start = doc_end = None
    if doc_node is not None and docstring is not None:
        examples, doctest_error = _examples(docstring, doc_node, lines, qualname)
        doc_start = lines.offset(doc_node.lineno, doc_node.col_offset)
        doc_end = lines.offset(doc_node.end_lineno or doc_node.lineno, doc_node.end_col_offset or 0)

    return Capsule(
        path=path,
        module_source=source,
        qualname=qualname,
        name=node.name,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        header=source[header_start:header_end],
        docstring=docstring,
        examples=examples,
        doctest_error=doctest_error,
        body_start=body_start,
        body_end=body_end,
        indent=indent,
        newline=_module_newline(lines, node.lineno),
        is_stub=all(is_stub_statement(statement) for statement in rest),
        def_line=first_line,
        end_line=end_line,
        header_start=header_start,
        docstring_start=doc_start,
        docstring_end=doc_end,
        inline_body=inline,
        indent_unit=indent_unit,
        top_level_start=lines.start(
            top.decorator_list[0].lineno if getattr(top, "decorator_list", None) else top.lineno
        ),
    )


def _build(
    source: str, path: Path | None, wanted: Callable[[str, _FunctionNode], bool]
) -> list[Capsule]:
    """Capsules for the functions `wanted(qualname, node)` accepts (building one is the costly part)."""
    module = parse_module(source)
    lines = SourceLines(source)
    found = [(q, node, top) for q, node, top in _functions(module) if wanted(q, node)]
    if not found:
        return []
    unit = indent_unit_of(module, lines)
    return [_capsule(source, path, lines, qualname, node, top, unit) for qualname, node, top in found]


def read_capsules(source: str, path: Path | None = None) -> list[Capsule]:
    """Every function in the module (methods, nested, async, decorated), in source order."""
    return _build(source, path, lambda qualname, node: True)


def capsule_by_qualname(source: str, qualname: str, path: Path | None = None) -> Capsule:
    """The function called `qualname` ('f', 'C.m', 'outer.inner'); the first one if defined twice."""
    found = _build(source, path, lambda name, node: name == qualname)
    if found:
        return found[0]
    known = [name for name, _, _ in _functions(parse_module(source))]
    raise CapsuleError(no_such_function(qualname, path, known))


def no_such_function(qualname: str, where: object, known: Iterable[str]) -> str:
    """The one sentence for a name that is not a function of the file `where` (None: not
    said), for `check`, `generate` and the language server alike, with the names it most likely meant
    (`known`: the file's functions, in file order)."""
    names = list(dict.fromkeys(known))
    leaf = qualname.rpartition(".")[2]
    close = [name for name in names if name.rpartition(".")[2] == leaf]  # `square` for `Shapes.square`
    close = close or difflib.get_close_matches(qualname, names, n=3, cutoff=0.6)
    if close:
        hint = f"; did you mean {' or '.join(repr(name) for name in close[:3])}?"
    elif names:
        hint = f" (its functions: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})."
    else:
        hint = " (it defines none)."
    in_file = f" in {where}" if where is not None else ""
    return f"there is no function named {qualname!r}{in_file}{hint}"


def _node_lines(node: _FunctionNode) -> tuple[int, int]:
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return first, node.body[-1].end_lineno or node.body[-1].lineno


def capsule_at(source: str, line0: int, character0: int, path: Path | None = None) -> Capsule | None:
    """The innermost function whose lines (decorators included) hold the 0-based editor position."""
    del character0  # Functions own whole lines; the column never changes the answer.
    line = line0 + 1
    module = parse_module(source)
    best: tuple[str, _FunctionNode, ast.stmt] | None = None
    for qualname, node, top in _functions(module):
        first, last = _node_lines(node)
        if first <= line <= last and (best is None or first >= _node_lines(best[1])[0]):
            best = (qualname, node, top)
    if best is None:
        return None
    lines = SourceLines(source)
    qualname, node, top = best
    return _capsule(source, path, lines, qualname, node, top, indent_unit_of(module, lines))
