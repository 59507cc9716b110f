"""Examples as doctests: the one shape the self-debugging loop can run.

HumanEval writes half of its examples as prose (`f(1) ==> 2`, `f(1) ➞ 2`, `f(1) == 2`, `f(1) returns 2`);
MBPP shows an `assert`. Both say exactly what a doctest says, so they are rewritten as doctests:
same information, now runnable. A value is printed only when a right answer prints exactly that
(see `repr_stable`); otherwise the example compares and expects `True`, so it is never stricter
than the statement it came from.
"""

from __future__ import annotations

import ast
import doctest
import re
from typing import Any

_SEPARATOR = re.compile(r"^\s*(==>|=>|==|➞|->|→|#?\s*returns?|should return)\s*(?P<value>.+)$")


def repr_stable(value: Any, top: bool = True) -> bool:
    """Values a correct answer prints as their repr: no floats (5 == 5.0), sets or dicts (order), and no
    bare None (doctest prints nothing for it). Ints stay, though a float equal to one also passes an
    equality: showing the value is worth that (3 sanitized MBPP references return 240.0 for 240)."""
    if isinstance(value, bool | int | str) or (value is None and not top):
        return True
    return isinstance(value, list | tuple) and all(repr_stable(v, top=False) for v in value)


def equality_example(call: str, expected: str) -> tuple[str, str] | None:
    """(source, want) of a doctest saying `call` equals the literal `expected`; None if it is no literal."""
    try:
        value = ast.literal_eval(expected.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if repr_stable(value):
        return call, repr(value)
    return f"{call} == {expected.strip()}", "True"


def _split_call(text: str, name: str) -> tuple[str, str] | None:
    """('name(...)', rest) when `text` starts with a call of `name`."""
    if not text.startswith(f"{name}("):
        return None
    for index, char in enumerate(text):
        if char != ")":
            continue
        try:
            node = ast.parse(text[: index + 1], mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, ast.Call):
            if not all(_is_literal(arg) for arg in [*node.args, *(k.value for k in node.keywords)]):
                return None  # 'is_happy(a) => False' names a value it does not give
            return text[: index + 1], text[index + 1:]
    return None


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def prose_example(line: str, name: str) -> tuple[str, str, str] | None:
    """A prose example line ('f(1, 2) ==> 3  # why') as (source, want, comment); None when it is not one."""
    text = line.strip()
    text = text.removeprefix("for ").strip()
    split = _split_call(text, name)
    if split is None:
        return None
    call, rest = split
    match = _SEPARATOR.match(rest)
    if match is None:
        return None
    value = match["value"].strip()
    code, hash_sign, comment = value.partition("#")
    for candidate, remark in ((code, hash_sign + comment), (value.rstrip("."), "")):
        if candidate.strip().startswith("(") and not candidate.strip().startswith("()") \
                and "," not in candidate:
            return None  # '("Venus")' is a string where a tuple was meant (HumanEval/148): ambiguous
        example = equality_example(call, candidate)
        if example is not None:
            return (*example, remark.strip())
    return None


def _docstring_node(tree: ast.Module, name: str) -> ast.Constant | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                return first.value
    return None


def _doctests(source: str, name: str) -> int | None:
    """How many doctest examples `name`'s docstring holds; None when unreadable."""
    try:
        node = _docstring_node(ast.parse(source), name)
        return len(doctest.DocTestParser().get_examples(node.value)) if node else 0
    except (SyntaxError, ValueError):
        return None


def with_prose_examples_as_doctests(source: str, name: str) -> tuple[str, int]:
    """`source` with `name`'s prose examples rewritten as doctests, and how many; unchanged when its
    docstring already has doctests or a rewrite would not read back exactly."""
    tree = ast.parse(source)
    node = _docstring_node(tree, name)
    if node is None or ">>>" in node.value:
        return source, 0
    lines = source.splitlines(keepends=True)
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    rewritten, count = [], 0
    for number, line in enumerate(lines):
        example = prose_example(line, name) if first < number < last or (first == number == last) else None
        text = "".join(example or ())
        if example is None or "\\" in text or '"""' in text or "'''" in text:
            rewritten.append(line)
            continue
        source, want, comment = example
        indent = line[: len(line) - len(line.lstrip())]
        newline = "\r\n" if line.endswith("\r\n") else "\n"
        if comment:  # the example's explanation stays, as prose above it
            rewritten.append(f"{indent}{comment}{newline}")
        rewritten.append(f"{indent}>>> {source}{newline}{indent}{want}{newline}")
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if following.strip() and number + 1 < last and prose_example(following, name) is None:
            rewritten.append(newline)  # a doctest's expected output runs until a blank line
        count += 1
    if count == 0:
        return source, 0
    result = "".join(rewritten)
    if _doctests(result, name) != count:
        return source, 0
    return result, count
