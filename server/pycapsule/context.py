"""What the prompt needs to know about the target's module, within a character budget.

The module's imports, then short summaries (signature + first docstring line, a class's
attributes and method signatures) of the definitions the target refers to: its own class first,
then names in its signature, its doctest examples, its docstring's prose, and its current body.

The module's own definitions are found with `ast`: exact, and ~100x faster than asking jedi.
jedi is used only for names imported from the user's own project files, which is what jedi is
good at (resolving imports to their definitions); standard-library and installed packages are
left out because the model knows them already.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import threading
from collections.abc import Iterator
from pathlib import Path

from pycapsule.capsule import Capsule, SourceLines, docstring_node, header_colon_end, parse_module
from pycapsule.debugging.source_text import dedent_code

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_JEDI_LOCK = threading.Lock()
"""jedi keeps process-wide caches; generations run in worker threads, so one lookup at a time."""
INIT_LINES_SHOWN = 15
"""A class's __init__ is shown whole up to this many lines: it tells which attributes exist."""


def module_context(capsule: Capsule, budget_chars: int = 4000) -> str:
    """Imports and summaries of the definitions the target refers to, most relevant first."""
    try:
        module = parse_module(capsule.module_source)
    except ValueError:
        return ""
    source = capsule.module_source
    lines = SourceLines(source)
    definitions = {node.name: node for node in module.body if isinstance(node, _Definition)}
    constants = {
        name: node for node in module.body for name in _assigned(node) if node.end_lineno == node.lineno
    }
    imports = [node for node in module.body if isinstance(node, ast.Import | ast.ImportFrom)]

    pieces: list[str] = []
    import_text = "\n".join(_segment(lines, node) for node in imports)
    if import_text:
        pieces.append("# The module's imports\n" + import_text)
    seen = {capsule.qualname.split(".")[0]} if not capsule.class_names else set()
    if capsule.class_names and capsule.class_names[0] in definitions:
        owner = capsule.class_names[0]
        seen.add(owner)
        summary = _summary(lines, definitions[owner], full_init=True)
        pieces.append("# The class the function belongs to\n" + summary)
    for name in _mentioned_names(capsule):
        if name in seen:
            continue
        seen.add(name)
        if name in definitions:
            pieces.append(_summary(lines, definitions[name], full_init=False))
        elif name in constants:
            pieces.append(_segment(lines, constants[name]))
        else:
            imported = _project_definition(capsule, imports, name)
            if imported:
                pieces.append(imported)
    return _within_budget(pieces, budget_chars)


def _within_budget(pieces: list[str], budget: int) -> str:
    chosen: list[str] = []
    used = 0
    for piece in pieces:
        cost = len(piece) + 2
        if used + cost <= budget:
            chosen.append(piece)
            used += cost
    return "\n\n".join(chosen)


def _assigned(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _segment(lines: SourceLines, node: ast.stmt) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    last = node.end_lineno or node.lineno
    return lines.text[lines.start(first) : lines.content_end(last)].replace("\r\n", "\n")


def _first_doc_line(node: ast.AST) -> str | None:
    doc = docstring_node(node)
    if doc is None:
        return None
    text = ast.get_docstring(node) or ""
    first = text.strip().split("\n", 1)[0].strip()
    return first or None


def _signature(lines: SourceLines, node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str) -> str:
    """Decorators and def line(s), then the first docstring line, then '...'."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = header_colon_end(lines, node, node.body[0])
    header = lines.text[lines.start(first) : end].replace("\r\n", "\n")
    header = "\n".join(line.removeprefix(indent) for line in header.split("\n"))
    doc = _first_doc_line(node)
    inner = "    "
    if doc:
        return f'{header}\n{inner}"""{doc}"""\n{inner}...'
    return f"{header}\n{inner}..."


def _summary(lines: SourceLines, node: _Definition, full_init: bool) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return _signature(lines, node, "")
    class_line_end = header_colon_end(lines, node, node.body[0])  # type: ignore[arg-type]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    parts = [lines.text[lines.start(first) : class_line_end].replace("\r\n", "\n")]
    doc = _first_doc_line(node)
    if doc:
        parts.append(f'    """{doc}"""')
    for item in node.body:
        if isinstance(item, ast.AnnAssign | ast.Assign) and item.end_lineno == item.lineno:
            parts.append("    " + lines.line_text(item.lineno).strip())
        elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            if item.name.startswith("_") and item.name != "__init__":
                continue
            length = (item.end_lineno or item.lineno) - item.lineno + 1
            if full_init and item.name == "__init__" and length <= INIT_LINES_SHOWN:
                text = _segment(lines, item)
                indent = _indent_of(lines, item)
                parts.append("\n".join("    " + line.removeprefix(indent) for line in text.split("\n")))
            else:
                signature = _signature(lines, item, _indent_of(lines, item))
                parts.append("\n".join("    " + line for line in signature.split("\n")))
    return "\n".join(parts)


def _indent_of(lines: SourceLines, node: ast.stmt) -> str:
    text = lines.line_text(node.lineno)
    return text[: len(text) - len(text.lstrip())]


def _mentioned_names(capsule: Capsule) -> Iterator[str]:
    """Names in the signature, the examples, the docstring's words and the body, in that order."""
    header = capsule.header.strip()
    with contextlib.suppress(SyntaxError, ValueError):
        tree = ast.parse(dedent_code(header.replace("\r\n", "\n")) + "\n    pass\n")
        yield from _names_in(tree)
    for example in capsule.examples:
        with contextlib.suppress(SyntaxError, ValueError):
            yield from _names_in(ast.parse(example.source))
    if capsule.docstring:
        try:
            prose = doctest.DocTestParser().parse(capsule.docstring)
        except ValueError:
            prose = [capsule.docstring]
        for part in prose:
            if isinstance(part, str):
                for word in part.replace("`", " ").replace("(", " ").replace(".", " ").split():
                    word = word.strip(",:;'\"[]{}")
                    if word.isidentifier():
                        yield word
    if not capsule.is_stub:
        with contextlib.suppress(SyntaxError, ValueError):
            yield from _names_in(ast.parse(dedent_code(capsule.body.replace("\r\n", "\n"))))


def _names_in(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            yield node.value  # A string annotation ('Point'), a forward reference.


def _project_definition(capsule: Capsule, imports: list[ast.stmt], name: str) -> str | None:
    """Signature + first docstring line of `name` when it is imported from a file of the project."""
    if capsule.path is None:
        return None
    root = Path(capsule.path).parent
    for statement in imports:
        if not isinstance(statement, ast.ImportFrom):
            continue
        alias = next((a for a in statement.names if (a.asname or a.name) == name), None)
        if alias is None or not _is_project_module(root, statement):
            continue
        return _jedi_summary(capsule, statement, name)
    return None


def _is_project_module(root: Path, statement: ast.ImportFrom) -> bool:
    if statement.level:
        return True
    parts = (statement.module or "").split(".")
    base = root.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _jedi_summary(capsule: Capsule, statement: ast.ImportFrom, name: str) -> str | None:
    import jedi

    lines = SourceLines(capsule.module_source)
    last = statement.end_lineno or statement.lineno
    text = lines.text[lines.start(statement.lineno) : lines.content_end(last)]
    column = None
    for line_offset, line in enumerate(text.split("\n")):
        found = _word_column(line, name)
        if found is not None:
            row, column = statement.lineno + line_offset, found
            break
    if column is None:
        return None
    path = Path(capsule.path) if capsule.path else None
    try:
        with _JEDI_LOCK:
            project = jedi.Project(path.parent if path else ".")
            script = jedi.Script(capsule.module_source, path=path, project=project)
            found_names = script.goto(row, column, follow_imports=True)
            return _describe(found_names, name)
    except Exception:  # jedi raises many kinds of internal errors on odd code; context is optional.
        return None


def _describe(found_names: list, name: str) -> str | None:
    """A found definition as '# from file.py' + its signature + first docstring line."""
    for definition in found_names:
        if definition.module_path is None:
            continue
        signatures = [signature.to_string() for signature in definition.get_signatures()]
        if definition.type == "class":
            head = f"class {name}:" + (f"  # constructed as {signatures[0]}" if signatures else "")
        else:
            head = f"def {signatures[0]}:" if signatures else f"def {name}(...):"
        doc = definition.docstring(raw=True).strip().split("\n", 1)[0].strip()
        where = Path(definition.module_path).name
        body = f'    """{doc}"""\n    ...' if doc else "    ..."
        return f"# from {where}\n{head}\n{body}"
    return None


def _word_column(line: str, word: str) -> int | None:
    start = 0
    while True:
        index = line.find(word, start)
        if index == -1:
            return None
        before = line[index - 1] if index else " "
        after = line[index + len(word)] if index + len(word) < len(line) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return index
        start = index + 1
