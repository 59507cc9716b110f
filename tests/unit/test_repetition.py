"""An answer stuck repeating lines, verbatim or of one shape, is recognised; real code, however regular,
never is."""

from __future__ import annotations

import ast
import collections
import inspect
import json
import locale
import textwrap
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pycapsule.debugging.repetition import (
    DATA_LINES,
    MIN_LINES,
    SHAPE_LINES,
    RepetitionWatch,
    ends_in_loop,
    line_shape,
)


def watch_text(text: str, piece: int = 7) -> bool:
    watch = RepetitionWatch()
    return any(watch.feed(text[i:i + piece]) for i in range(0, len(text), piece))


@pytest.mark.parametrize("block", [
    ["from collections.abc import Sequence", "from collections.abc import Iterator"],
    ["    result.append(x)"],
    ["    if x:", "        y += 1", "    else:", "        y -= 1", ""],
])
def test_a_block_repeated_back_to_back_is_a_loop(block: list[str]) -> None:
    text = "```python\ndef f(x):\n" + "\n".join(block * 40) + "\n"
    assert watch_text(text)


def test_a_few_repeats_are_not_yet_a_loop() -> None:
    assert not ends_in_loop(["import os"] * (MIN_LINES - 1))
    assert ends_in_loop(["import os"] * MIN_LINES)


def test_blank_lines_alone_are_not_a_loop() -> None:
    assert not ends_in_loop([""] * 50)


@pytest.mark.parametrize("module", [ast, inspect, json.decoder, textwrap])
def test_real_modules_never_look_like_a_loop(module: object) -> None:
    assert not watch_text(inspect.getsource(module))  # type: ignore[arg-type]


@given(st.lists(st.text(alphabet="abc =()\n", max_size=30), max_size=60))
def test_lines_that_differ_are_never_a_loop(lines: list[str]) -> None:
    distinct = [f"{line} #{n}" for n, line in enumerate("".join(lines).split("\n"))]
    assert not ends_in_loop(distinct)


def same_shaped_chain(copies: int) -> str:
    """The loop of issue 66: one `if value == N: return "..."` after another."""
    return "".join(f'    if value == {n}:\n        return "item number {n}"\n' for n in range(copies))


def test_lines_of_one_shape_over_and_over_are_a_loop() -> None:
    text = "```python\ndef describe(value):\n" + same_shaped_chain(200)
    watch = RepetitionWatch()
    lines = text.split("\n")
    ended_at = next(index for index, line in enumerate(lines) if watch.add_line(line))
    assert ended_at < 2 + SHAPE_LINES + 2  # within a copy of the threshold: the other 360 lines are not read


def test_the_shape_of_a_line_leaves_out_names_strings_and_numbers_but_keeps_keywords_and_layout() -> None:
    assert line_shape('    if value == 2: return "two"') == line_shape("    if count == 30: return 'many'")
    assert line_shape("    if value == 2:") != line_shape("    while value == 2:")
    assert line_shape("    x = 1") != line_shape("        x = 1")


def test_a_short_run_of_same_shaped_checks_is_code_not_a_loop() -> None:
    checks = "".join(f"    if n % {p} == 0:\n        n //= {p}\n\n" for p in (2, 3, 5, 7, 11))
    assert not watch_text(f"def smallest(n):\n{checks}    return n\n")


def test_a_table_of_literals_may_run_longer_than_code() -> None:
    table = "".join(f"        {n}: {n * n},\n" for n in range(DATA_LINES - 10))
    assert not watch_text(f"def squares():\n    return {{\n{table}    }}\n")
    assert watch_text(f"def squares():\n    return {{\n{table * 2}")


@pytest.mark.parametrize("module", [ast, collections, inspect, locale, typing])
def test_no_function_of_real_modules_looks_like_a_loop(module: object) -> None:
    source = inspect.getsource(module)  # type: ignore[arg-type]
    functions = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)]
    assert functions
    for function in functions:
        assert not watch_text(textwrap.dedent(ast.get_source_segment(source, function) or "")), function.name
