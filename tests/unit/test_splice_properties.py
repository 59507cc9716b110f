"""Properties of splice over generated modules and replies (indentation, line endings, layouts)."""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycapsule.capsule import Capsule, capsule_by_qualname
from pycapsule.debugging.signature import apply_edits, splice

STATEMENTS = [
    ["total = 0"],
    ["# a comment line"],
    ["for item in range(x):", ">total += item"],
    ["if x > 3:", ">return x", "else:", ">x = x + 1"],
    ["values = [", "    1,", "  2,", "]"],
    ["text = '''keep", "  this   exactly", "'''"],
    ["def inner(y):", ">return y * 2", "total = inner(x)"],
    ["while x > 100:", ">x //= 2", ">if x == 7:", ">>break"],
    ["try:", ">total = 1 / x", "except ZeroDivisionError:", ">total = 0"],
]


STUBS = ["...", "pass", "raise NotImplementedError()", "only-doc", "real", "inline", "same-line"]


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, str]:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    in_class = draw(st.booleans())
    is_async = draw(st.booleans())
    decorated = draw(st.booleans())
    doc = draw(st.sampled_from(["none", "one-line", "doctest"]))
    stub = draw(st.sampled_from(STUBS))
    if stub == "only-doc" and doc == "none":
        stub = "pass"
    if stub == "inline":
        doc = "none"
    if stub == "same-line":
        doc = "one-line"
    before = draw(st.sampled_from(["", "import os\n\n", '"""Mod."""\n\nX = 1\n\n']))
    after = draw(st.sampled_from(["", "\n\ndef other():\n    return 2\n", "\n# trailing comment\n"]))
    end_newline = draw(st.booleans())

    indent = unit if in_class else ""
    body_indent = indent + unit
    lines = []
    if in_class:
        lines.append("class Box:")
    if decorated:
        lines.append(f"{indent}@staticmethod" if in_class else "@staticmethod")
    keyword = "async def" if is_async else "def"
    params = "x, label='é'"
    if stub == "inline":
        lines.append(f"{indent}{keyword} target({params}): ...")
    else:
        lines.append(f"{indent}{keyword} target(")
        lines.append(f"{indent}    {params},")
        lines.append(f"{indent}) -> int:")
    if doc == "one-line":
        lines.append(f'{body_indent}"""Doc."""' + ("; return 0" if stub == "same-line" else ""))
    elif doc == "doctest":
        lines += [f'{body_indent}"""Doc.', "", f"{body_indent}>>> 1 + 1", f"{body_indent}2"]
        lines.append(f'{body_indent}"""')
    if stub in ("...", "pass", "raise NotImplementedError()"):
        lines.append(f"{body_indent}{stub}")
    elif stub == "real":
        lines += [f"{body_indent}# old", f"{body_indent}return 0"]
    text = before + "\n".join(lines) + "\n" + after
    if not end_newline:
        text = text.rstrip("\n")
    return text.replace("\n", newline), "Box.target" if in_class else "target"


@st.composite
def replies(draw: st.DrawFn) -> str:
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    chosen = draw(st.lists(st.sampled_from(range(len(STATEMENTS))), min_size=1, max_size=4))
    with_doc = draw(st.booleans())
    with_helper = draw(st.booleans())
    lines = ["import math", "", "def _twice(v):", f"{unit}return 2 * v", ""] if with_helper else []
    lines.append("def target(x, label='é'):")
    if with_doc:
        lines.append(f'{unit}"""The model\'s own docstring."""')
    for index in chosen:
        for line in STATEMENTS[index]:
            depth = 1 + len(line) - len(line.lstrip(">"))
            code = line.lstrip(">")
            inside_string = code.startswith("  this") or code == "'''" or code.startswith(("    1", "  2"))
            lines.append(code if inside_string else unit * depth + code)
    if with_helper:
        lines.append(f"{unit}x = _twice(math.floor(x))")
    lines.append(f"{unit}return total if 'total' in dir() else x")
    return "\n".join(lines) + "\n"


def _body_dump(function: ast.AST) -> list[str]:
    body = function.body  # type: ignore[attr-defined]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return [ast.dump(statement) for statement in body]


def _function(source: str, capsule: Capsule) -> ast.AST:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == capsule.name:
            return node
    raise AssertionError("target not found")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(), replies())
def test_splice_keeps_everything_but_the_body_and_moves_the_reply_body_exactly(
    module: tuple[str, str], reply: str
) -> None:
    source, qualname = module
    capsule = capsule_by_qualname(source, qualname)
    result = splice(capsule, reply)

    compile(result.new_source, "spliced.py", "exec")
    assert apply_edits(source, result.edits) == result.new_source
    replaced = [e for e in result.edits if e.start != e.end or e.start == capsule.body_start]
    assert [(e.start, e.end) for e in replaced] == [(capsule.body_start, capsule.body_end)]
    for insertion in result.edits:
        if insertion not in replaced:  # imports and helpers: whole lines above the function
            assert insertion.start <= capsule.header_start
            assert insertion.start == 0 or source[insertion.start - 1] in "\r\n"
            assert insertion.new_text.endswith(capsule.newline)
    assert result.new_source.endswith(source[capsule.body_end :])
    if "_twice" in reply:
        assert result.new_source.count("import math") == 1
        assert result.new_source.count("def _twice(v):") == 1

    new = capsule_by_qualname(result.new_source, qualname)
    assert new.header == capsule.header
    assert new.docstring == capsule.docstring
    assert new.body == result.body
    assert result.body.startswith(capsule.indent)
    other_line_breaks = result.body.replace(capsule.newline, "")
    assert "\n" not in other_line_breaks and "\r" not in other_line_breaks

    reply_function = _function(reply, capsule)
    assert _body_dump(_function(result.new_source, capsule)) == _body_dump(reply_function)


@settings(max_examples=100, deadline=None)
@given(modules(), replies())
def test_splicing_twice_gives_the_same_module(module: tuple[str, str], reply: str) -> None:
    source, qualname = module
    once = splice(capsule_by_qualname(source, qualname), reply).new_source
    twice = splice(capsule_by_qualname(once, qualname), reply).new_source
    assert twice == once
