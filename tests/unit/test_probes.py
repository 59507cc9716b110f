"""Signature probes (issue 65 item 4): the inputs a function's annotations admit, drawn with a fixed seed,
as literal calls; a function whose annotations cannot all be read gets none."""

from __future__ import annotations

import ast

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.strength.probes import signature_calls


def calls(source: str, name: str = "f") -> tuple[str, ...]:
    return signature_calls(capsule_by_qualname(source, name))


def arguments(call: str) -> list[object]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    return [ast.literal_eval(a) for a in node.args]


def test_a_list_of_any_gets_lists_of_ints_and_lists_of_strings_each_alike() -> None:
    found = [arguments(c)[0] for c in calls("from typing import Any\ndef f(items: list[Any]) -> str: ...\n")]
    assert [] in found
    assert any(items and all(isinstance(i, int) for i in items) for items in found)
    assert any(items and all(isinstance(i, str) for i in items) for items in found)
    assert not any({type(i) for i in items} == {int, str} for items in found)  # a body may assume alike items


def test_optional_admits_none_and_typing_spellings_are_read() -> None:
    source = "import typing\ndef f(x: typing.Optional[typing.List[int]]): ...\n"
    found = [arguments(c)[0] for c in calls(source)]
    assert None in found and [] in found
    assert all(x is None or all(isinstance(i, int) for i in x) for x in found)


def test_string_annotations_unions_tuples_and_dicts_are_read() -> None:
    source = "def f(a: 'int | str', b: tuple[int, str], c: dict[str, float]) -> None: ...\n"
    for call in calls(source):
        a, b, c = arguments(call)
        assert isinstance(a, int | str)
        assert isinstance(b, tuple) and isinstance(b[0], int) and isinstance(b[1], str)
        assert isinstance(c, dict) and all(isinstance(k, str) and isinstance(v, float) for k, v in c.items())


def test_parameters_with_defaults_are_left_to_them_and_keyword_only_ones_are_named() -> None:
    found = calls("def f(n: int, *, unit: str, scale: float = 1.0) -> str: ...\n")
    assert found and all(", unit=" in call and "scale" not in call for call in found)


def test_the_same_function_gets_the_same_calls() -> None:
    source = "def f(xs: list[int], n: int) -> int: ...\n"
    assert calls(source) == calls(source) and len(calls(source)) > 10


def test_the_examples_own_calls_are_not_probed_again() -> None:
    source = 'def f(n: int) -> int:\n    """\n    >>> f(0)\n    0\n    """\n'
    assert "f(0)" not in calls(source) and calls(source)


@pytest.mark.parametrize("signature", [
    "def f(x): ...",  # not annotated
    "def f(x: Widget): ...",  # a class: how to build one is not known
    "def f(x: Callable[[int], int]): ...",
    "def f(xs: Iterator[int]): ...",  # a list is not an iterator
    "def f(xs: set[list[int]]): ...",  # cannot exist
    "async def f(x: int): ...",
    "class C:\n    def f(self, x: int): ...",
])
def test_a_function_whose_inputs_cannot_be_built_gets_no_probes(signature: str) -> None:
    source = f"from typing import Callable, Iterator\n{signature}\n"
    name = "C.f" if "class C" in signature else "f"
    assert calls(source, name) == ()


def test_a_function_without_parameters_gets_no_probes() -> None:
    assert calls("def f() -> int: ...\n") == ()
