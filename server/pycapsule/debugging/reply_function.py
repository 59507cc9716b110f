"""The target function in a model's reply, lined up with the user's signature.

Finds the def (by name, in the same class, at top level, nested; a renamed single function; a
lambda; a bare body), checks its parameters against the user's (same kinds and count; renamed
ones are renamed back in the body), its async-ness and that it has a real body.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from pycapsule.capsule import Capsule, SourceLines, docstring_node, indent_unit_of, is_stub_statement
from pycapsule.debugging import SignatureMismatch
from pycapsule.debugging.source_text import (
    dedent_code,
    leading_whitespace,
    line_kinds,
    normalize_newlines,
    reindent,
)
from pycapsule.debugging.statements import names_bound_within
from pycapsule.parsing import parse_source

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class ReplyFunction:
    code: str
    """The reply's code, normalized to '\n', with renamed names already renamed back."""
    module: ast.Module
    function: _FunctionNode
    """The target's def in `module`."""
    notes: list[str]
    """The repairs made so far, for Splice.notes."""


def signature_node(capsule: Capsule) -> _FunctionNode:
    """The user's def, parsed from the header alone (the module may be large)."""
    header = capsule.header
    first_line = header.split("\n", 1)[0]
    indented = bool(leading_whitespace(first_line))
    text = ("if 1:\n" if indented else "") + header + "\n" + capsule.indent + "pass\n"
    try:
        tree = parse_source(normalize_newlines(text))
    except SyntaxError:
        raise SignatureMismatch(f"The signature of {capsule.name} cannot be read on its own.") from None
    statement = tree.body[0].body[0] if indented else tree.body[0]  # type: ignore[attr-defined]
    assert isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
    return statement


def _parse_reply(code: str) -> ast.Module:
    try:
        return parse_source(code)
    except SyntaxError as error:
        raise SignatureMismatch(
            f"The reply's code does not parse: {error.msg} at line {error.lineno}."
        ) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SignatureMismatch(f"The reply's code cannot be parsed: {error}.") from None


def prepare_reply(capsule: Capsule, code: str) -> ReplyFunction:
    code = normalize_newlines(code.lstrip("\ufeff"))
    code = dedent_code(code)
    if not code.endswith("\n"):
        code += "\n"
    module = _parse_reply(code)
    user = signature_node(capsule)
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
        module = parse_source(code)
        function = _function_at(module, function.lineno)
    _check_body(capsule, function)
    return ReplyFunction(code=code, module=module, function=function, notes=notes)


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
    read = {node.id for statement in function.body for node in ast.walk(statement)
            if isinstance(node, ast.Name)}
    return read | names_bound_within(function.body)


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


def reply_indent_unit(code: str, module: ast.Module) -> str:
    return indent_unit_of(module, SourceLines(code))
