"""Prose examples become doctests with the same meaning, never a stricter or a different one."""

from __future__ import annotations

import pytest
from pycapsule.bench.datasets.examples import prose_example, with_prose_examples_as_doctests
from pycapsule.capsule import capsule_by_qualname


@pytest.mark.parametrize(("line", "example"), [
    ("f(1, 2) ==> 3", ("f(1, 2)", "3", "")),
    ("    f([1,2]) ➞ [2, 1]", ("f([1,2])", "[2, 1]", "")),
    ('f("ab") == "ba"', ('f("ab")', "'ba'", "")),
    ("for f(7, 34, 12) == 34", ("f(7, 34, 12)", "34", "")),
    ('f(15)   # returns "db1111db"', ("f(15)", "'db1111db'", "")),
    ("f(5) returns [1, 5] # 5 -> 16 -> 8", ("f(5)", "[1, 5]", "# 5 -> 16 -> 8")),
    ("f(2) -> 2.5", ("f(2) == 2.5", "True", "")),       # a float is compared, not printed
    ("f([]) == (None, None)", ("f([])", "(None, None)", "")),
    ("f() => None", ("f() == None", "True", "")),        # doctest prints nothing for None
])
def test_a_prose_example_line_becomes_a_doctest(line: str, example: tuple[str, str, str]) -> None:
    assert prose_example(line, "f") == example


@pytest.mark.parametrize("line", [
    "f(a) => False",                       # names a value the example does not give
    'f("Earth", "Mercury") ==> ("Venus")',  # a string where a tuple was meant
    "f(2) = 1 + (2 / 2) = 2",              # a derivation, not a result
    "f(19) ->19 - 5 - 6 = 8",
    "g(1) == 2",
    "Input: f(1)",
])
def test_lines_that_do_not_say_exactly_what_f_returns_are_left_alone(line: str) -> None:
    assert prose_example(line, "f") is None


def test_the_docstring_is_rewritten_in_place_and_explanations_stay_separate() -> None:
    source = (
        "def f(xs):\n"
        '    """Sort.\n'
        "\n"
        "    Example:\n"
        "    f([2, 1])==>[1, 2]\n"
        "    Explanation: ascending.\n"
        "    f([]) ==> []\n"
        '    """\n'
    )
    rewritten, count = with_prose_examples_as_doctests(source, "f")
    assert count == 2
    capsule = capsule_by_qualname(rewritten, "f")
    examples = [(e.source.strip(), e.want.strip()) for e in capsule.examples]
    assert examples == [("f([2, 1])", "[1, 2]"), ("f([])", "[]")]
    assert "    Explanation: ascending.\n" in rewritten


def test_a_docstring_that_already_has_doctests_is_not_touched() -> None:
    source = 'def f(x):\n    """\n    >>> f(1)\n    2\n    f(2) ==> 3\n    """\n'
    assert with_prose_examples_as_doctests(source, "f") == (source, 0)
