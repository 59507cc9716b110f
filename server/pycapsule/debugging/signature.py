"""Fit a model's code into the user's function: only the body changes.

The user's decorators, def line(s) and docstring stay byte-identical. From the reply we take the
target function's body statements (its docstring dropped), the imports and module-level helpers
that body needs, and nothing else. A reply that renamed the function or its parameters is
repaired when that is unambiguous (references in the body are renamed back); anything else is
rejected with a one-sentence reason the fix prompt can show the model.
"""

from __future__ import annotations

import ast
import builtins
import symtable
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from pycapsule.capsule import (
    Capsule,
    SourceLines,
    docstring_node,
    header_colon_end,
    indent_unit_of,
    is_stub_statement,
    parse_module,
)
from pycapsule.debugging import UnusableReply
from pycapsule.debugging.source_text import (
    dedent_code,
    leading_whitespace,
    line_kinds,
    normalize_newlines,
    reindent,
)

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__"}

# Names models use without importing them, and where they live (only used when nothing binds them).
_WELL_KNOWN: dict[str, str] = {
    **{name: "typing" for name in (
        "Any", "Callable", "Dict", "FrozenSet", "Iterable", "Iterator", "List", "Optional",
        "Sequence", "Set", "Tuple", "Union", "Generator", "Mapping", "TypeVar",
    )},
    **{name: "collections" for name in ("Counter", "OrderedDict", "defaultdict", "deque", "namedtuple")},
    **{name: "functools" for name in ("reduce", "lru_cache", "cache", "partial", "cmp_to_key")},
    **{name: "itertools" for name in (
        "accumulate", "chain", "combinations", "combinations_with_replacement", "count", "cycle",
        "groupby", "islice", "permutations", "product", "zip_longest",
    )},
    **{name: "heapq" for name in ("heappush", "heappop", "heapify", "nlargest", "nsmallest")},
    **{name: "bisect" for name in ("bisect_left", "bisect_right", "insort")},
    "Fraction": "fractions",
    "Decimal": "decimal",
}


class SignatureMismatch(UnusableReply):
    """The reply cannot be fitted into the user's function; `reason` is one sentence for the model."""


@dataclass(frozen=True)
class TextEdit:
    start: int
    end: int
    """Character offsets into the original module source."""
    new_text: str


@dataclass(frozen=True)
class Splice:
    new_source: str
    body: str
    """The new body as it stands in `new_source`: whole indented lines."""
    edits: tuple[TextEdit, ...]
    """Non-overlapping, sorted; applying them to the original source gives `new_source`."""
    notes: tuple[str, ...] = ()
    """What was repaired, e.g. 'renamed plus back to add', 'added import math'."""


@dataclass
class _Reply:
    code: str
    module: ast.Module
    function: _FunctionNode
    notes: list[str]


def apply_edits(source: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping offset edits (in any order) to `source`."""
    result = source
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        result = result[: edit.start] + edit.new_text + result[edit.end :]
    return result


def splice(capsule: Capsule, code: str) -> Splice:
    """Replace the capsule's body with the target function's body from `code` (a model's code)."""
    reply = _prepare_reply(capsule, code)
    user_module = parse_module(capsule.module_source)
    newline = capsule.newline

    body_lines = _body_lines(capsule, reply)
    new_body = "".join(line + newline for line in body_lines)
    body_text = new_body
    if capsule.inline_body:
        docstring = ""
        if capsule.docstring_start is not None and capsule.docstring_end is not None:
            literal = capsule.module_source[capsule.docstring_start : capsule.docstring_end]
            docstring = capsule.indent + literal + newline
        body_text = newline + docstring + new_body
    elif capsule.body_start > 0 and capsule.module_source[capsule.body_start - 1] not in "\r\n":
        body_text = newline + new_body
    body_edit = TextEdit(capsule.body_start, capsule.body_end, body_text)
    edits = [body_edit]

    methods = _needed_methods(capsule, reply, user_module)
    method_text = "".join(_method_text(capsule, reply, method) + newline for method in methods)
    if method_text:
        edits.append(TextEdit(capsule.header_start, capsule.header_start, method_text))
        reply.notes.extend(f"kept method `{method.name}`" for method in methods)

    helpers, imports = _needed_definitions(capsule, reply, _module_bindings(user_module), methods)
    import_offset = _import_offset(user_module, capsule)
    helper_text = "".join(
        _top_level_text(reply.code, statement, newline) + newline * 3 for statement in helpers
    )
    import_text = "".join(line + newline for line in imports)
    if import_text and import_offset == capsule.top_level_start:
        edits.append(TextEdit(import_offset, import_offset, import_text + newline * 2 + helper_text))
    else:
        if import_text:
            edits.append(TextEdit(import_offset, import_offset, import_text))
        if helper_text:
            edits.append(TextEdit(capsule.top_level_start, capsule.top_level_start, helper_text))
    reply.notes.extend(f"added `{line}`" for line in imports)
    reply.notes.extend(f"kept helper `{_bound_names(s)[0]}`" for s in helpers)

    _check_compiles(capsule, user_module, [body_edit, *edits[1:]], import_text + helper_text)
    edits.sort(key=lambda edit: edit.start)
    new_source = apply_edits(capsule.module_source, edits)
    return Splice(new_source=new_source, body=new_body, edits=tuple(edits), notes=tuple(reply.notes))


def _check_compiles(capsule: Capsule, module: ast.Module, edits: list[TextEdit], prelude: str) -> None:
    """Compile what changed: the new imports and helpers, then the module statement holding the target.

    Compiling only that statement (not the whole module) keeps a splice cheap in a large file and
    still catches what the parser lets through ('await' outside async, bad nonlocal, ...).
    """
    lines = SourceLines(capsule.module_source)
    start = capsule.top_level_start
    end = next(
        (
            lines.end(statement.end_lineno or statement.lineno)
            for statement in module.body
            if lines.start(_first_line(statement)) == start
        ),
        len(capsule.module_source),
    )
    inside = [
        TextEdit(edit.start - start, edit.end - start, edit.new_text)
        for edit in edits
        if start < edit.start or (edit.start == start and edit.end > start)
    ]
    text = prelude + apply_edits(capsule.module_source[start:end], inside)
    try:
        compile(text, str(capsule.path or "<module>"), "exec", dont_inherit=True)
    except SyntaxError as error:
        message = f"The reply's body does not compile inside {capsule.name}: {error.msg}."
        raise SignatureMismatch(message) from None


# --- the reply's target function ---------------------------------------------------------------


def _header_node(capsule: Capsule) -> _FunctionNode:
    """The user's def, parsed from the header alone (the module may be large)."""
    header = capsule.header
    first_line = header.split("\n", 1)[0]
    indented = bool(leading_whitespace(first_line))
    text = ("if 1:\n" if indented else "") + header + "\n" + capsule.indent + "pass\n"
    try:
        tree = ast.parse(normalize_newlines(text))
    except SyntaxError:
        raise SignatureMismatch(f"The signature of {capsule.name} cannot be read on its own.") from None
    statement = tree.body[0].body[0] if indented else tree.body[0]  # type: ignore[attr-defined]
    assert isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
    return statement


def _parse_reply(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError as error:
        raise SignatureMismatch(
            f"The reply's code does not parse: {error.msg} at line {error.lineno}."
        ) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SignatureMismatch(f"The reply's code cannot be parsed: {error}.") from None


def _prepare_reply(capsule: Capsule, code: str) -> _Reply:
    code = normalize_newlines(code.lstrip("\ufeff"))
    code = dedent_code(code)
    if not code.endswith("\n"):
        code += "\n"
    module = _parse_reply(code)
    user = _header_node(capsule)
    notes: list[str] = []
    function = _find_target(capsule, module)
    if function is None and _lambda_target(capsule, module) is not None:
        code, module = _lambda_as_def(code, module, _lambda_target(capsule, module))  # type: ignore[arg-type]
        function = _find_target(capsule, module)
        notes.append(f"turned the lambda assigned to {capsule.name} into a def")
    if function is None:
        if _is_bare_body(module):
            code, module, function = _wrap_bare_body(code, user)
            notes.append("wrapped a bare body in the function")
        else:
            function = _renamed_target(capsule, module)
            notes.append(f"renamed {function.name} back to {capsule.name}")
    renames = _parameter_renames(capsule, user, function)
    notes.extend(f"renamed parameter {old} back to {new}" for old, new in renames.items())
    if function.name != capsule.name:
        renames[function.name] = capsule.name
    _check_async(capsule, function)
    if renames:
        code = _rename_in_function(code, function, renames)
        module = ast.parse(code)
        function = _function_at(module, function.lineno)
    _check_body(capsule, function)
    return _Reply(code=code, module=module, function=function, notes=notes)


def _lambda_target(capsule: Capsule, module: ast.Module) -> ast.Assign | None:
    """`add = lambda a, b: a + b` at the reply's top level."""
    for statement in reversed(module.body):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == capsule.name
            and isinstance(statement.value, ast.Lambda)
        ):
            return statement
    return None


def _lambda_as_def(code: str, module: ast.Module, statement: ast.Assign) -> tuple[str, ast.Module]:
    function = statement.value
    assert isinstance(function, ast.Lambda)
    name = statement.targets[0].id  # type: ignore[attr-defined]
    body = ast.get_source_segment(code, function.body) or ast.unparse(function.body)
    replacement = f"def {name}({ast.unparse(function.args)}):\n    return (\n        {body}\n    )\n"
    lines = code.split("\n")
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    code = "\n".join([*lines[: first - 1], replacement.rstrip("\n"), *lines[last:]])
    return code, _parse_reply(code)


def _is_bare_body(module: ast.Module) -> bool:
    """A reply that is just statements ending in a return (a completion-style reply)."""
    has_definitions = any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for node in module.body
    )
    has_return = any(isinstance(node, ast.Return) for node in module.body)
    return has_return and not has_definitions


def _wrap_bare_body(code: str, user: _FunctionNode) -> tuple[str, ast.Module, _FunctionNode]:
    kinds = line_kinds(code)
    lines = code.split("\n")[:-1]
    body = reindent(lines, 1, kinds, "", "    ", "    ", "    ")
    prefix = "async def" if isinstance(user, ast.AsyncFunctionDef) else "def"
    wrapped = f"{prefix} {user.name}({ast.unparse(user.args)}):\n" + "\n".join(body) + "\n"
    module = _parse_reply(wrapped)
    function = module.body[0]
    assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
    return wrapped, module, function


def _defs_in(statements: list[ast.stmt]) -> list[_FunctionNode]:
    return [node for node in statements if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def _find_target(capsule: Capsule, module: ast.Module) -> _FunctionNode | None:
    """The reply's def of the target, by name: in the same class, at top level, in any class, nested."""
    name = capsule.name
    classes = [node for node in module.body if isinstance(node, ast.ClassDef)]
    owner = capsule.class_names[-1] if capsule.class_names else None
    tiers: list[list[_FunctionNode]] = [
        [f for c in classes if c.name == owner for f in _defs_in(c.body) if f.name == name],
        [f for f in _defs_in(module.body) if f.name == name],
        [f for c in classes for f in _defs_in(c.body) if f.name == name],
        [
            node
            for node in ast.walk(module)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        ],
    ]
    for tier in tiers:
        if tier:
            return tier[-1]  # A later definition wins, as when Python runs the module.
    return None


def _looks_like_test(name: str) -> bool:
    return name.startswith("test") or name in {"check", "main"}


def _renamed_target(capsule: Capsule, module: ast.Module) -> _FunctionNode:
    candidates = [f for f in _defs_in(module.body) if not _looks_like_test(f.name)]
    if capsule.class_names:
        for node in module.body:
            if isinstance(node, ast.ClassDef):
                candidates += [f for f in _defs_in(node.body) if not f.name.startswith("__")]
    if len(candidates) > 1:
        # Helpers are called by the function that uses them: the target is the one nobody calls.
        called = {
            node.id
            for function in candidates
            for node in ast.walk(function)
            if isinstance(node, ast.Name) and node.id != function.name
        }
        candidates = [f for f in candidates if f.name not in called]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise SignatureMismatch(f"The reply does not define the function {capsule.name}.")
    names = ", ".join(sorted({f.name for f in candidates}))
    raise SignatureMismatch(f"The reply does not define {capsule.name}; it defines {names} instead.")


def _function_at(module: ast.Module, line: int) -> _FunctionNode:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == line:
            return node
    raise SignatureMismatch("The reply's function could not be found again after renaming.")


# --- parameters, async, body ------------------------------------------------------------------


def _parameter_groups(args: ast.arguments) -> dict[str, list[str]]:
    return {
        "positional": [a.arg for a in (*args.posonlyargs, *args.args)],
        "*": [args.vararg.arg] if args.vararg else [],
        "keyword-only": [a.arg for a in args.kwonlyargs],
        "**": [args.kwarg.arg] if args.kwarg else [],
    }


def _parameter_renames(capsule: Capsule, user: _FunctionNode, reply: _FunctionNode) -> dict[str, str]:
    """Reply parameter name -> user parameter name, or SignatureMismatch when they do not line up."""
    mine, theirs = _parameter_groups(user.args), _parameter_groups(reply.args)
    name = capsule.name
    if (
        mine["positional"][:1] in (["self"], ["cls"])
        and theirs["positional"] == mine["positional"][1:]
        and mine["positional"][0] not in _names_used(reply)
    ):
        theirs["positional"] = mine["positional"][:1] + theirs["positional"]
    receiver = theirs["positional"][:1]
    if receiver in (["self"], ["cls"]) and len(theirs["positional"]) == len(mine["positional"]) + 1:
        # A plain function answered as a method (`class Solution: def add(self, ...)`).
        if receiver[0] in _names_used(reply):
            raise SignatureMismatch(
                f"The reply writes {name} as a method that uses {receiver[0]}; it must be a plain function."
            )
        theirs["positional"] = theirs["positional"][1:]
    renames: dict[str, str] = {}
    for group, expected in mine.items():
        got = theirs[group]
        if len(got) > len(expected):
            extra = ", ".join(got[len(expected) :])
            raise SignatureMismatch(
                f"The reply's {name} adds the {group} parameter(s) {extra} that the signature does not have."
            )
        if len(got) < len(expected):
            missing = ", ".join(expected[len(got) :])
            raise SignatureMismatch(
                f"The reply's {name} drops the {group} parameter(s) {missing} of the signature."
            )
        renames.update({old: new for old, new in zip(got, expected, strict=True) if old != new})
    if renames:
        used = _names_used(reply)
        introduced = set(renames.values()) - set(renames)
        clash = sorted(introduced & used)
        if clash:
            raise SignatureMismatch(
                f"The reply's {name} renames its parameters and already uses {', '.join(clash)} "
                "for something else, so they cannot be renamed back."
            )
    return renames


def _names_used(function: _FunctionNode) -> set[str]:
    """Every name the function's body reads, writes or binds (parameters excluded)."""
    names: set[str] = set()
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                names.update(node.names)
    return names


def _rename_in_function(code: str, function: _FunctionNode, renames: dict[str, str]) -> str:
    """Rename names inside the function's body (and its parameter list) at their exact positions."""
    lines = SourceLines(code)
    spans: list[tuple[int, str, str]] = []
    for node in ast.walk(function.args):
        if isinstance(node, ast.arg) and node.arg in renames:
            spans.append((lines.offset(node.lineno, node.col_offset), node.arg, renames[node.arg]))
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id in renames:
                spans.append((lines.offset(node.lineno, node.col_offset), node.id, renames[node.id]))
            elif isinstance(node, ast.arg) and node.arg in renames:
                spans.append((lines.offset(node.lineno, node.col_offset), node.arg, renames[node.arg]))
            elif isinstance(node, _BINDERS) and _binds_any(node, renames):
                raise SignatureMismatch(
                    "The reply renames the function or its parameters and rebinds one of those names "
                    "in a way that cannot be renamed back."
                )
    result = code
    for offset, old, new in sorted(spans, reverse=True):
        if result[offset : offset + len(old)] != old:
            raise SignatureMismatch("The reply's renamed names could not be located exactly.")
        result = result[:offset] + new + result[offset + len(old) :]
    return result


_BINDERS = (
    ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.Global, ast.Nonlocal,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias,
)


def _binds_any(node: ast.AST, renames: dict[str, str]) -> bool:
    if isinstance(node, ast.Global | ast.Nonlocal):
        return any(name in renames for name in node.names)
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[0] in renames
    return getattr(node, "name", None) in renames


def _check_async(capsule: Capsule, function: _FunctionNode) -> None:
    if capsule.is_async or not isinstance(function, ast.AsyncFunctionDef):
        return
    for node in _own_scope_nodes(function):
        if isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith):
            raise SignatureMismatch(
                f"The reply makes {capsule.name} a coroutine (async def, with await) "
                "but the signature is a plain def."
            )


def _own_scope_nodes(function: _FunctionNode) -> Iterable[ast.AST]:
    """Nodes of the function's own scope (nested functions, lambdas and classes skipped)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.append(child)


def _check_body(capsule: Capsule, function: _FunctionNode) -> None:
    statements = function.body[1:] if docstring_node(function) else function.body
    if not statements:
        raise SignatureMismatch(f"The reply's {capsule.name} has a docstring but no body.")
    if all(is_stub_statement(statement) for statement in statements):
        raise SignatureMismatch(
            f"The reply's {capsule.name} is still a stub (pass, ... or raise NotImplementedError)."
        )


def _body_lines(capsule: Capsule, reply: _Reply) -> list[str]:
    """The reply's body statements, re-indented to the capsule's indentation, without line endings."""
    function, code = reply.function, reply.code
    lines = SourceLines(code)
    doc = docstring_node(function)
    statements = function.body[1:] if doc else function.body
    first, last = statements[0], statements[-1]
    previous_end_line = (doc.end_lineno or doc.lineno) if doc else _colon_line(code, lines, function)
    kinds = line_kinds(code)
    end_line = last.end_lineno or last.lineno
    text_lines = [lines.line_text(n) for n in range(1, end_line + 1)]
    function_indent = leading_whitespace(lines.line_text(function.lineno))
    if first.lineno > previous_end_line:
        start_line = previous_end_line + 1
        block = text_lines[start_line - 1 :]
        source_indent = leading_whitespace(lines.line_text(first.lineno))
    else:
        # The body shares a line with the header or the docstring: start at the statement itself.
        start_line = first.lineno
        start = lines.offset(first.lineno, first.col_offset)
        block = [code[start : lines.content_end(first.lineno)], *text_lines[first.lineno :]]
        source_indent = ""
    source_unit = source_indent[len(function_indent) :] if source_indent.startswith(function_indent) else ""
    if not source_unit:
        source_unit = _reply_indent_unit(code, reply.module)
    body = reindent(
        block, start_line, kinds, source_indent, source_unit, capsule.indent, capsule.indent_unit
    )
    while body and not body[0].strip():
        body.pop(0)
    return body


def _colon_line(code: str, lines: SourceLines, function: _FunctionNode) -> int:
    return lines.line_of(header_colon_end(lines, function, function.body[0]) - 1)


def _reply_indent_unit(code: str, module: ast.Module) -> str:
    return indent_unit_of(module, SourceLines(code))


# --- helpers and imports ----------------------------------------------------------------------


def _module_bindings(module: ast.Module) -> set[str]:
    """Names bound at the user's module level, also under top-level if/try/with/for blocks."""
    names: set[str] = set()
    pending: list[ast.stmt] = list(module.body)
    while pending:
        statement = pending.pop()
        names.update(_bound_names(statement))
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(statement, field, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            pending.extend(handler.body)
            if handler.name:
                names.add(handler.name)
        if isinstance(statement, ast.For | ast.AsyncFor):
            names.update(n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name))
        if isinstance(statement, ast.With | ast.AsyncWith):
            for item in statement.items:
                if item.optional_vars is not None:
                    names.update(n.id for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name))
    return names


def _bound_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [statement.name]
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]


def _scope_globals(table: symtable.SymbolTable) -> set[str]:
    """Global names a scope and the scopes nested in it use."""
    names = {symbol.get_name() for symbol in table.get_symbols() if symbol.is_global()}
    for child in table.get_children():
        names |= _scope_globals(child)
    return names


def _find_table(table: symtable.SymbolTable, name: str, line: int) -> symtable.SymbolTable | None:
    for child in table.get_children():
        if child.get_name() == name and child.get_lineno() == line:
            return child
        found = _find_table(child, name, line)
        if found is not None:
            return found
    return None


def _globals_of(statement: ast.stmt, table: symtable.SymbolTable) -> set[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        # symtable records a decorated definition at its first decorator's line.
        lines = [d.lineno for d in statement.decorator_list] + [statement.lineno]
        names: set[str] = set()
        for node in (*statement.decorator_list, *_outer_expressions(statement)):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for line in lines:
            scope = _find_table(table, statement.name, line)
            if scope is not None:
                return names | _scope_globals(scope)
        return names
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}


def _outer_expressions(statement: ast.stmt) -> list[ast.AST]:
    """Parts of a definition evaluated in the enclosing scope: defaults, annotations, bases."""
    if isinstance(statement, ast.ClassDef):
        return [*statement.bases, *statement.keywords]
    args = statement.args  # type: ignore[attr-defined]
    parts: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    return parts


def _needed_definitions(
    capsule: Capsule, reply: _Reply, module_names: set[str], methods: list[_FunctionNode]
) -> tuple[list[ast.stmt], list[str]]:
    """Reply top-level definitions the new body needs (transitively), and import lines to add."""
    try:
        table = symtable.symtable(reply.code, "<reply>", "exec")
    except SyntaxError as error:
        raise SignatureMismatch(f"The reply's code does not compile: {error.msg}.") from None
    function = reply.function
    scope = _find_table(table, function.name, function.lineno)
    if scope is None and function.decorator_list:
        scope = _find_table(table, function.name, function.decorator_list[0].lineno)
    wanted = (_scope_globals(scope) if scope else set()) - _BUILTINS - {capsule.name}
    for method in methods:
        wanted |= _globals_of(method, table)
    providers: dict[str, ast.stmt] = {}
    for statement in reply.module.body:
        if statement is reply.function or isinstance(statement, ast.If | ast.Expr):
            continue
        for name in _bound_names(statement):
            providers[name] = statement  # The last binding wins, as when the module runs.
    helpers: list[ast.stmt] = []
    import_lines: list[str] = []
    seen: set[str] = set()
    pending = sorted(wanted)
    while pending:
        name = pending.pop()
        if name in seen or name in module_names or name in _BUILTINS or name == capsule.name:
            continue
        seen.add(name)
        statement = providers.get(name)
        if statement is None:
            line = _well_known_import(name, reply.function)
            if line:
                import_lines.append(line)
            continue
        if isinstance(statement, ast.Import | ast.ImportFrom):
            if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
                import_lines.append(_import_line(statement, name))
            continue
        if any(statement is helper for helper in helpers):
            continue
        if _contains(statement, reply.function):
            continue  # The class the reply wrapped the target in: the user's class is kept instead.
        helpers.append(statement)
        pending.extend(sorted(_globals_of(statement, table) - seen))
    helpers.sort(key=lambda statement: statement.lineno)
    return helpers, list(dict.fromkeys(import_lines))


def _contains(statement: ast.stmt, target: ast.AST) -> bool:
    return any(node is target for node in ast.walk(statement))


def _import_line(statement: ast.Import | ast.ImportFrom, name: str) -> str:
    aliases = [a for a in statement.names if (a.asname or a.name).split(".")[0] == name]
    if isinstance(statement, ast.Import):
        return ast.unparse(ast.Import(names=aliases))
    return ast.unparse(ast.ImportFrom(module=statement.module, names=aliases, level=statement.level))


def _well_known_import(name: str, function: _FunctionNode) -> str | None:
    """`import math` for `math.sqrt(...)`, `from collections import Counter` for `Counter(...)`."""
    used_as_module = any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name
        for node in ast.walk(function)
    )
    if used_as_module and name in sys.stdlib_module_names:
        return f"import {name}"
    module = _WELL_KNOWN.get(name)
    return f"from {module} import {name}" if module else None


def _first_line(statement: ast.stmt) -> int:
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])


def _top_level_text(code: str, statement: ast.stmt, newline: str) -> str:
    lines = SourceLines(code)
    first = _first_line(statement)
    last = statement.end_lineno or statement.lineno
    text = code[lines.start(first) : lines.content_end(last)]
    return text.replace("\n", newline)


def _class_path(module: ast.Module, names: tuple[str, ...]) -> ast.ClassDef | None:
    """The user's class for 'C' / 'Outer.C' (None when a scope on the way is a function)."""
    scope: list[ast.stmt] = module.body
    found: ast.ClassDef | None = None
    for name in names:
        found = next((s for s in scope if isinstance(s, ast.ClassDef) and s.name == name), None)
        if found is None:
            return None
        scope = found.body
    return found


def _members(statements: list[ast.stmt]) -> dict[str, ast.stmt]:
    return {name: statement for statement in statements for name in _bound_names(statement)}


def _needed_methods(capsule: Capsule, reply: _Reply, module: ast.Module) -> list[_FunctionNode]:
    """Methods of the reply's class that the new body calls on self/cls and the user's class lacks."""
    user_class = _class_path(module, capsule.class_names) if capsule.class_names else None
    reply_class = next(
        (
            node
            for node in ast.walk(reply.module)
            if isinstance(node, ast.ClassDef) and any(item is reply.function for item in node.body)
        ),
        None,
    )
    if user_class is None or reply_class is None:
        return []
    existing = _members(user_class.body)
    offered = {
        name: node
        for name, node in _members(reply_class.body).items()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name not in existing
    }
    needed: list[_FunctionNode] = []
    pending: list[_FunctionNode] = [reply.function]
    while pending:
        function = pending.pop()
        receiver = function.args.posonlyargs + function.args.args
        if not receiver:
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == receiver[0].arg
                and node.attr in offered
                and all(node.attr != method.name for method in needed)
            ):
                method = offered[node.attr]
                assert isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                needed.append(method)
                pending.append(method)
    return sorted(needed, key=lambda method: method.lineno)


def _method_text(capsule: Capsule, reply: _Reply, method: _FunctionNode) -> str:
    """A reply method moved into the user's class, indented like the target's def line."""
    lines = SourceLines(reply.code)
    first = min([method.lineno, *(d.lineno for d in method.decorator_list)])
    last = method.end_lineno or method.lineno
    block = [lines.line_text(number) for number in range(first, last + 1)]
    source_indent = leading_whitespace(lines.line_text(method.lineno))
    header_indent = leading_whitespace(capsule.header.split("\n", 1)[0])
    unit = _reply_indent_unit(reply.code, reply.module)
    kinds = line_kinds(reply.code)
    moved = reindent(block, first, kinds, source_indent, unit, header_indent, capsule.indent_unit)
    return "".join(line + capsule.newline for line in moved)


def _import_offset(module: ast.Module, capsule: Capsule) -> int:
    """Where new imports go: after the last top-level import before the target, else at the top."""
    lines = SourceLines(capsule.module_source)
    last_import: ast.stmt | None = None
    first_other: ast.stmt | None = None
    for index, statement in enumerate(module.body):
        start = lines.start(statement.lineno)
        if start >= capsule.top_level_start:
            break
        if isinstance(statement, ast.Import | ast.ImportFrom):
            last_import = statement
        elif index == 0 and docstring_node(module) is not None:
            last_import = last_import or statement  # Imports go below a module docstring.
        elif first_other is None:
            first_other = statement
    if last_import is not None:
        return lines.end(last_import.end_lineno or last_import.lineno)
    if first_other is not None:
        line = min([first_other.lineno, *(d.lineno for d in getattr(first_other, "decorator_list", []))])
        return lines.start(line)
    return capsule.top_level_start
