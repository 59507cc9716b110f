"""Capsules: finding the target function and the exact region its body occupies."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.capsule import (
    CapsuleError,
    SourceFile,
    capsule_at,
    capsule_by_qualname,
    read_capsules,
    read_source_file,
    write_source_file,
)

MODULE = '''"""Module."""
import functools


def add(a, b):
    """Add.

    >>> add(1, 2)
    3
    """
    ...


class Shapes:
    @staticmethod
    @functools.cache
    def area(
        width: int,
        height: int = 2,
    ) -> int:
        """Area.

        >>> Shapes.area(2, 3)
        6
        """
        # real code already
        return width * height

    async def load(self):
        raise NotImplementedError("later")


def outer():
    def inner(x):
        pass
    return inner
'''


def test_every_function_is_found_with_its_qualname() -> None:
    names = [capsule.qualname for capsule in read_capsules(MODULE)]
    assert names == ["add", "Shapes.area", "Shapes.load", "outer", "outer.inner"]


def test_header_holds_decorators_and_the_whole_def_verbatim() -> None:
    capsule = capsule_by_qualname(MODULE, "Shapes.area")
    assert capsule.header == (
        "    @staticmethod\n    @functools.cache\n    def area(\n        width: int,\n"
        "        height: int = 2,\n    ) -> int:"
    )
    assert capsule.def_line == 15
    assert capsule.end_line == 27


def test_stub_kinds() -> None:
    stubs = {capsule.qualname: capsule.is_stub for capsule in read_capsules(MODULE)}
    assert stubs == {
        "add": True, "Shapes.area": False, "Shapes.load": True, "outer": False, "outer.inner": True
    }


def test_body_region_is_whole_lines_after_the_docstring_comments_included() -> None:
    capsule = capsule_by_qualname(MODULE, "Shapes.area")
    assert capsule.body == "        # real code already\n        return width * height\n"
    assert capsule.indent == "        "
    assert capsule.indent_unit == "    "


def test_async_and_nested_functions() -> None:
    load = capsule_by_qualname(MODULE, "Shapes.load")
    assert load.is_async and load.docstring is None
    assert load.body == '        raise NotImplementedError("later")\n'
    inner = capsule_by_qualname(MODULE, "outer.inner")
    assert inner.body == "        pass\n"


def test_examples_carry_their_module_line() -> None:
    capsule = capsule_by_qualname(MODULE, "Shapes.area")
    (example,) = capsule.examples
    assert example.source == "Shapes.area(2, 3)\n"
    assert example.want == "6\n"
    assert MODULE.splitlines()[example.line - 1].strip() == ">>> Shapes.area(2, 3)"
    assert capsule.verified_by_doctests


def test_closing_quotes_are_never_read_as_expected_output() -> None:
    source = 'def f():\n    """\n    >>> f()\n    1"""\n'
    (example,) = capsule_by_qualname(source, "f").examples
    assert example.want == "1\n"


def test_function_without_doctests_is_not_verified() -> None:
    capsule = capsule_by_qualname("def f(x):\n    '''Just prose.'''\n", "f")
    assert capsule.examples == ()
    assert not capsule.verified_by_doctests
    assert capsule.is_stub and capsule.body == ""


def test_examples_that_only_set_up_verify_nothing() -> None:
    """toolz's groupby: its calls are all `+SKIP`; the assignments before them run and print nothing."""
    source = ('def groupby(key, seq):\n    """\n    >>> names = ["Al", "Bo"]\n'
              '    >>> groupby(len, names)  # doctest: +SKIP\n    {2: ["Al", "Bo"]}\n    """\n')
    assert not capsule_by_qualname(source, "groupby").verified_by_doctests


@pytest.mark.parametrize("example", ["f(1)", "assert f(1) == 2", "print(g(1))\n    2", "Box().f(1)",
                                     "Box() == Box()\n    True"])
def test_an_example_that_calls_the_function_or_expects_output_verifies_it(example: str) -> None:
    source = f'class Box:\n    def f(self, x):\n        """\n        >>> {example}\n        """\n'
    source = source.replace("\n    2", "\n        2").replace("\n    True", "\n        True")
    assert capsule_by_qualname(source, "Box.f").verified_by_doctests


def test_unparsable_doctests_become_one_sentence() -> None:
    source = 'def f():\n    """\n    >>> f()\n      1\n    >>> x = 1\n   ... 2\n    """\n'
    capsule = capsule_by_qualname(source, "f")
    assert capsule.doctest_error is not None
    assert capsule.doctest_error.startswith("The doctests in the docstring of f cannot be parsed")
    assert "\n" not in capsule.doctest_error
    assert not capsule.verified_by_doctests


def test_crlf_and_tabs_are_reported_as_they_are() -> None:
    source = "class C:\r\n\tdef m(self):\r\n\t\t'''Doc.'''\r\n\t\tpass\r\n"
    capsule = capsule_by_qualname(source, "C.m")
    assert capsule.newline == "\r\n"
    assert capsule.indent == "\t\t" and capsule.indent_unit == "\t"
    assert capsule.body == "\t\tpass\r\n"
    assert source[capsule.body_end :] == ""


def test_docstring_only_stub_has_an_empty_region_after_the_docstring() -> None:
    source = 'def f():\n    """Doc."""\n\n\ndef g():\n    pass\n'
    capsule = capsule_by_qualname(source, "f")
    assert capsule.body_start == capsule.body_end == source.index("\n\n") + 1


def test_inline_body_region_starts_after_the_colon() -> None:
    source = "def square(x): return x * x  # fast\n"
    capsule = capsule_by_qualname(source, "square")
    assert capsule.inline_body
    assert source[capsule.body_start : capsule.body_end] == " return x * x  # fast\n"
    assert capsule.body == "    return x * x  # fast\n"


def test_non_ascii_lines_map_byte_columns_to_characters() -> None:
    source = 'def f(): return "é"  # ü\ndef g(): return "ü"\n'
    capsule = capsule_by_qualname(source, "g")
    assert source[capsule.body_start : capsule.body_end] == ' return "ü"\n'


def test_capsule_at_returns_the_innermost_function_for_an_editor_position() -> None:
    lines = MODULE.splitlines()
    inner_line0 = next(i for i, line in enumerate(lines) if "def inner" in line)
    assert capsule_at(MODULE, inner_line0 + 1, 0).qualname == "outer.inner"
    assert capsule_at(MODULE, inner_line0 - 1, 4).qualname == "outer"
    decorator_line0 = next(i for i, line in enumerate(lines) if "@staticmethod" in line)
    assert capsule_at(MODULE, decorator_line0, 4).qualname == "Shapes.area"
    assert capsule_at(MODULE, 1, 0) is None


def test_syntax_error_is_a_capsule_error_with_its_line() -> None:
    with pytest.raises(CapsuleError) as raised:
        read_capsules("def f(:\n    pass\n")
    assert raised.value.line == 1
    assert raised.value.message.startswith("The module has a syntax error at line 1")


def test_unknown_qualname_names_the_functions_that_exist() -> None:
    with pytest.raises(CapsuleError, match=r"no function named 'nope' \(its functions: add, Shapes.area"):
        capsule_by_qualname(MODULE, "nope")


def test_coding_cookie_files_round_trip_byte_for_byte(tmp_path: Path) -> None:
    raw = "# -*- coding: latin-1 -*-\r\ndef f():\r\n    '''Caf\xe9.'''\r\n".encode("latin-1")
    path = tmp_path / "legacy.py"
    path.write_bytes(raw)
    loaded = read_source_file(path)
    assert loaded.encoding == "iso-8859-1"
    capsule = capsule_by_qualname(loaded.text, "f", path)
    assert capsule.docstring == "Caf\xe9."
    assert capsule.newline == "\r\n"
    write_source_file(path, SourceFile(loaded.text, loaded.encoding))
    assert path.read_bytes() == raw


def test_bom_is_kept(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfdef f():\n    pass\n"
    path = tmp_path / "bom.py"
    path.write_bytes(raw)
    loaded = read_source_file(path)
    assert not loaded.text.startswith("\ufeff")
    write_source_file(path, loaded)
    assert path.read_bytes() == raw


def test_undecodable_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"def f():\n    return '\xff'\n")
    with pytest.raises(CapsuleError, match="cannot be decoded"):
        read_source_file(path)


def test_examples_keep_their_lines_when_the_literal_has_escaped_newlines() -> None:
    source = 'def f():\n    """One.\\nTwo.\n\n    >>> f()\n    1\n    """\n'
    (example,) = capsule_by_qualname(source, "f").examples
    assert source.splitlines()[example.line - 1].strip() == ">>> f()"


def test_functions_under_module_level_blocks_keep_their_scope_name() -> None:
    source = (
        "import sys\nif sys.version_info >= (3, 11):\n    def f():\n        pass\n"
        "else:\n    def g():\n        pass\n"
    )
    assert [c.qualname for c in read_capsules(source)] == ["f", "g"]
    assert capsule_by_qualname(source, "g").top_level_start == source.index("if sys")


def test_a_body_after_the_docstring_on_its_line_reads_as_its_own_line() -> None:
    source = 'def f():\n    """Doc."""; return 1\n'
    capsule = capsule_by_qualname(source, "f")
    assert capsule.body == "    return 1\n"
    assert not capsule.is_stub
