"""No class in the `pycapsule` package is over 300 lines and no function over 80 (issue 67).

A class that size holds more than one duty (`loop._Run` held the attempt policy, the judge, the history
writes and the wording at 486 lines) and a function that long cannot be read at once. Lines count from the
`def`/`class` line (decorators excluded) to the last line of the body, docstrings and comments included.
"""

from __future__ import annotations

import ast

from tests.structure.test_import_cycles import module_files

MOST_CLASS_LINES = 300
MOST_FUNCTION_LINES = 80


def oversized(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of each class over MOST_CLASS_LINES and function over MOST_FUNCTION_LINES."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            most = MOST_CLASS_LINES
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            most = MOST_FUNCTION_LINES
        else:
            continue
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > most:
            found.append((node.name, node.lineno, node.end_lineno - node.lineno + 1))
    return found


def test_no_class_is_over_300_lines_and_no_function_over_80() -> None:
    found = [f"{path.name}:{line} {name} ({lines} lines)" for path in module_files().values()
             for name, line, lines in oversized(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_measure_finds_a_long_function_and_a_long_class() -> None:
    long_function = "def f():\n" + "    x = 1\n" * 80
    long_class = "class C:\n" + "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(110))
    assert oversized(ast.parse(long_function)) == [("f", 1, 81)]
    assert [name for name, _, _ in oversized(ast.parse(long_class))] == ["C"]
    assert oversized(ast.parse("def g():\n" + "    x = 1\n" * 79)) == []
