"""One function finder and one line rule: generate, check (the sandbox's doctest items) and the editor's
outline see the same functions at the same lines, whatever compound statement holds them and whatever
line separators the file uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pycapsule.capsule import read_capsules
from pycapsule.doctest_items import doctest_items
from pycapsule.lsp.doctest_keys import ModuleKeys
from pycapsule.lsp.documents import parse_text
from pygls.workspace.position_codec import PositionCodec

HEADERS = [
    "if True:", "for _ in range(1):", "while False:", "try:", "with open(__file__):", "match 1:",
    "class Box:", "def outer():",
]


def _block(header: str, inner: list[str], indent: str) -> list[str]:
    lines = [indent + header]
    if header == "match 1:":
        lines.append(indent + "    case 1:")
        indent += "    "
    lines += [indent + "    " + line for line in inner]
    if header == "try:":
        lines += [indent + "except Exception:", indent + "    pass"]
    return lines


def _function(name: str) -> list[str]:
    return [f"def {name}(x):", f'    """>>> {name}(1)', "    1", '    """', "    return x"]


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A module with functions nested under random compound statements, and the qualnames of those."""
    lines: list[str] = []
    expected: list[str] = []
    for number in range(draw(st.integers(1, 4))):
        name = f"f{number}"
        inner = _function(name)
        prefix = ""
        for header in reversed(draw(st.lists(st.sampled_from(HEADERS), max_size=3))):
            inner = _block(header, inner, "")
            if header == "class Box:":
                prefix = "Box." + prefix
            elif header == "def outer():":
                prefix = "outer." + prefix
        expected.append(prefix + name)
        lines += [*inner, ""]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    feed = draw(st.sampled_from(["", "\f"]))
    return feed + newline.join(lines) + newline, expected


@settings(max_examples=60, deadline=None)
@given(modules())
def test_generate_check_and_the_outline_find_the_same_functions(case: tuple[str, list[str]]) -> None:
    source, expected = case
    capsules = read_capsules(source)
    outline = parse_text("file:///m.py", 1, source, PositionCodec()).outline
    found = [c.qualname for c in capsules]
    assert set(expected) <= set(found)
    assert all(q in expected or q.endswith("outer") for q in found)
    assert [o.qualname for o in outline] == found
    assert [o.first_line for o in outline] == [c.def_line for c in capsules]
    for capsule in capsules:
        (item,) = doctest_items(source, (capsule.qualname,))
        assert item.error is None
        assert item.docstring == (capsule.docstring or "")


def test_a_form_feed_above_a_function_does_not_hide_a_change_of_its_body() -> None:
    before = "import math\n\f\ndef f(x):\n    '''>>> f(1)\n    1\n    '''\n    return x\n"
    after = before.replace("return x", "return x + 1")
    assert ModuleKeys(before).key("f", 3) != ModuleKeys(after).key("f", 3)
