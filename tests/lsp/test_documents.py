"""The outline answers "which function is here, is it a stub, where is its name" like the full
capsules do, and the local outline (one definition parsed alone) agrees with the whole-module one."""

from __future__ import annotations

import pytest
from pycapsule.capsule import read_capsules
from pycapsule.lsp.documents import local_outline, parse_text
from pygls.workspace.position_codec import PositionCodec

MODULE = '''"""Module."""
import functools


@functools.cache
def cached(x):
    """>>> cached(1)
    1
    """
    ...


class Shape:
# a comment at column 0 inside the class
    def area(self):
        raise NotImplementedError

    async def  later(self):
        """Not yet."""

        def helper():
            pass
        return helper


if True:
    def conditional():
        return 1

TEXT = """
def not_a_function():
"""


def café(x):
    return x
'''


def test_outline_agrees_with_the_capsules():
    document = parse_text("file:///m.py", 1, MODULE, PositionCodec())
    capsules = read_capsules(MODULE)
    assert [(f.qualname, f.first_line, f.end_line, f.is_stub) for f in document.outline] == [
        (c.qualname, c.def_line, c.end_line, c.is_stub) for c in capsules
    ]


def test_name_positions():
    document = parse_text("file:///m.py", 1, MODULE, PositionCodec())
    lines = MODULE.splitlines()
    for function in document.outline:
        line = lines[function.name_line]
        assert line[function.name_column :].startswith(function.name), function


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_the_local_outline_finds_the_same_function_at_every_line(line_end: str):
    text = MODULE.replace("\n", line_end)
    document = parse_text("file:///m.py", 1, text, PositionCodec())
    isolated = 0
    for line0 in range(len(MODULE.splitlines()) + 1):
        local = local_outline(text, line0)
        if local is None:
            continue  # could not isolate the definition: the caller parses the whole module
        isolated += 1
        expected = document.outline_at_line(line0)
        found = max(
            (f for f in local if f.first_line <= line0 + 1 <= f.end_line),
            key=lambda f: f.first_line,
            default=None,
        )
        assert found == expected, (line0, MODULE.splitlines()[line0])
        assert all(f in document.outline for f in local), (line0, local)
    assert isolated == 24, "the lines of the module's top-level definitions"


def test_the_local_outline_gives_up_inside_a_string_that_reaches_column_0():
    line0 = MODULE.splitlines().index("def not_a_function():")
    assert local_outline(MODULE, line0) is None
