"""What the debugging modules read off statements the same way: the names they bind, their first line."""

from __future__ import annotations

import ast
from collections.abc import Iterable


def bound_names(statement: ast.stmt) -> list[str]:
    """Names the statement binds in the scope it runs in: a definition's name, an import's (the first part
    of a dotted one), every name in an assignment's targets; none for any other statement."""
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


def top_level_names(statements: list[ast.stmt]) -> set[str]:
    """The names these statements bind where they stand (`bound_names`), those under an `if`, `try`, `with`
    or loop included; not the locals of a definition."""
    names: set[str] = set()
    for statement in statements:
        names.update(bound_names(statement))
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                names |= top_level_names([child])
            elif isinstance(child, ast.ExceptHandler):
                names |= top_level_names(child.body)
    return names


def free_names(function: ast.AST) -> set[str]:
    """The names a function reads that it does not bind itself (parameters and nested scopes included)."""
    read = {node.id for node in ast.walk(function)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return read - names_bound_within([function])


def names_bound_within(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name bound anywhere inside `nodes`, nested scopes included: assigned or deleted names,
    parameters, definitions, imports, `except ... as` and `match` captures, global and nonlocal names."""
    names: set[str] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
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


def first_line(statement: ast.stmt) -> int:
    """The statement's first line: its first decorator's, for a decorated definition."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
