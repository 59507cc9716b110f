"""Prose examples become doctests with the same meaning, never a stricter or a different one."""

from __future__ import annotations

import pytest
from pycapsule.bench.datasets.examples import (
    input_output_example,
    prose_example,
    sentence_example,
    with_doctest_outputs_repaired,
    with_prose_examples_as_doctests,
)
from pycapsule.capsule import capsule_by_qualname


def _examples(source: str) -> list[tuple[str, str]]:
    """The doctests of `f` in `source`, as (source, expected output)."""
    return [(e.source.strip(), e.want.strip()) for e in capsule_by_qualname(source, "f").examples]


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
    ('f("a.txt") # => \'Yes\'', ('f("a.txt")', "'Yes'", "")),
    ("* f([5]) => [5]", ("f([5])", "[5]", "")),         # a bulleted list of examples
    ("f('1a') # => 'No' (must start with a letter)", ("f('1a')", "'No'", "(must start with a letter)")),
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
    assert prose_example(line, "f", equals=True) is None


def test_f_of_x_equals_y_is_an_example_only_when_the_docstring_allows_it() -> None:
    assert prose_example("f(12, 15) = 14", "f") is None
    assert prose_example("f(12, 15) = 14", "f", equals=True) == ("f(12, 15)", "14", "")


@pytest.mark.parametrize(("line", "example"), [
    ("For lst = [1,2,3] the output should be 14", ("f([1,2,3])", "14", "")),
    ('For lst = ["AB"] the output should be 1.', ('f(["AB"])', "1", "")),   # the full stop ends the sentence
    ("For lst = [1, 2], the sum is 3 the output should be \"11\".", ("f([1, 2])", "'11'", "the sum is 3")),
])
def test_a_for_x_equals_sentence_becomes_a_doctest(line: str, example: tuple[str, str, str]) -> None:
    assert sentence_example(line, "f", ["lst"]) == example


def test_a_sentence_names_parameters_and_the_call_follows_the_signatures_order() -> None:
    line = 'For c = "ae", s = "abcde", the result should be (\'bcd\',False)'
    assert sentence_example(line, "f", ["s", "c"]) == ('f("abcde", "ae")', "('bcd', False)", "")
    assert sentence_example('For s = "abc" the result should be 1', "f", ["s", "c"]) is None  # c missing
    assert sentence_example("For s = x the result should be 1", "f", ["s"]) is None           # no literal


def test_an_input_line_followed_by_an_output_line_becomes_a_doctest() -> None:
    assert input_output_example("    Input: arr = [-3, -4, 5], k = 3", "    Output: [-4, -3, 5]", "f",
                                ["arr", "k"]) == ("f([-3, -4, 5], 3)", "[-4, -3, 5]", "")
    assert input_output_example("Input: [4,2,3]", "Output: [2, 1]", "f", ["arr"]) == \
        ("f([4,2,3])", "[2, 1]", "")
    assert input_output_example("Input: 24", "Output: 24 # sum of 21 + 3", "f", ["n"]) == \
        ("f(24)", "24", "# sum of 21 + 3")
    assert input_output_example("Input: [4,2,3]", "Output: [2, 1]", "f", ["arr", "k"]) is None
    assert input_output_example("Input: [4,2,3]", "Explanation: ...", "f", ["arr"]) is None


def test_input_and_output_lines_are_rewritten_with_the_explanation_kept_outside_the_expected_output() -> None:
    source = (
        "def f(arr, k):\n"
        '    """Largest k.\n'
        "\n"
        "    Example 1:\n"
        "        Input: arr = [3, 1, 2], k = 2\n"
        "        Output: [2, 3]\n"
        "        Explanation: the two largest, sorted.\n"
        '    """\n'
    )
    rewritten, count = with_prose_examples_as_doctests(source, "f")
    assert (count, _examples(rewritten)) == (1, [("f([3, 1, 2], 2)", "[2, 3]")])
    assert "        Explanation: the two largest, sorted.\n" in rewritten


def test_a_recurrence_written_with_equals_is_not_read_as_examples() -> None:
    source = (
        "def f(n):\n"
        '    """The sequence: f(1) = 3, and\n'
        "    f(n) = 1 + n / 2, if n is even.\n"
        "    f(4) = 3\n"
        "    f(3) => [1, 3, 2, 8]\n"
        '    """\n'
    )
    rewritten, count = with_prose_examples_as_doctests(source, "f")
    # 'f(4) = 3' names an element of the sequence, not what f returns
    assert (count, _examples(rewritten)) == (1, [("f(3)", "[1, 3, 2, 8]")])


def test_an_explanation_after_an_example_does_not_become_part_of_its_expected_output() -> None:
    source = (
        "def f(name):\n"
        '    """Check a name.\n'
        '    f("a.txt") # => \'Yes\'\n'
        '    f("1a.txt") # => \'No\' (it must start with a letter)\n'
        '    """\n'
    )
    rewritten, count = with_prose_examples_as_doctests(source, "f")
    assert (count, _examples(rewritten)) == (2, [('f("a.txt")', "'Yes'"), ('f("1a.txt")', "'No'")])


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
    assert (count, _examples(rewritten)) == (2, [("f([2, 1])", "[1, 2]"), ("f([])", "[]")])
    assert "    Explanation: ascending.\n" in rewritten


def test_a_docstring_that_already_has_doctests_is_not_touched() -> None:
    source = 'def f(x):\n    """\n    >>> f(1)\n    2\n    f(2) ==> 3\n    """\n'
    assert with_prose_examples_as_doctests(source, "f") == (source, 0)


def test_doctest_outputs_are_written_as_python_prints_what_they_mean() -> None:
    source = (
        "def f(x):\n"
        '    """Shift.\n'
        "    >>> f(12) == '21'\n"
        "    >>> f(1)\n"
        '    "1"\n'
        "    >>> f([1])\n"
        '    ["a",\n'
        '     "b"]\n'
        "    >>> f(2)\n"
        "    '2'\n"
        '    """\n'
    )
    repaired, count = with_doctest_outputs_repaired(source, "f")
    assert count == 3
    assert _examples(repaired) == [("f(12) == '21'", "True"), ("f(1)", "'1'"), ("f([1])", "['a', 'b']"),
                                   ("f(2)", "'2'")]


def test_outputs_that_mean_something_else_or_are_already_right_are_not_touched() -> None:
    source = (
        "def f(x):\n"
        '    """\n'
        "    >>> f(0)\n"          # no output: prints nothing (None)
        "    >>> f(1) < 2\n"      # not an equality
        "    >>> f(2)\n"
        "    2.50\n"              # a float: printed as computed
        "    >>> f(3)\n"
        "    [1, 2]\n"
        '    """\n'
    )
    assert with_doctest_outputs_repaired(source, "f") == (source, 0)
