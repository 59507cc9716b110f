"""Mutants of one function's body (pycapsule.strength.mutants): which small changes are made, how each
is written back into the module's text, and which are kept."""

from __future__ import annotations

import ast
import difflib
import inspect
import shlex
import textwrap

import pytest
from pycapsule.capsule import definitions
from pycapsule.strength.mutants import OPERATORS, Mutant, mutants_of


def module(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def changes(source: str, qualname: str = "f", operator: str | None = None) -> list[str]:
    return [m.change for m in mutants_of(source, qualname, limit=1000).mutants
            if operator is None or m.operator == operator]


def only(source: str, change: str, qualname: str = "f") -> Mutant:
    [mutant] = [m for m in mutants_of(source, qualname, limit=1000).mutants if m.change == change]
    return mutant


def changed_lines(before: str, after: str) -> list[int]:
    """1-based lines that differ, for texts with the same number of lines."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [number for number, (a, b) in enumerate(zip(old, new, strict=True), 1) if a != b]


SIGN = module("""
    def f(n):
        if n < 0:
            return -1
        return 1
""")


def test_a_comparison_is_changed_at_its_operator_only() -> None:
    assert changes(SIGN, operator="comparison") == ["`n < 0` -> `n <= 0`", "`n < 0` -> `n > 0`"]
    mutant = only(SIGN, "`n < 0` -> `n <= 0`")
    assert (mutant.line, mutant.operator) == (2, "comparison")
    assert mutant.source == SIGN.replace("n < 0", "n <= 0")


def test_each_operator_of_a_chained_comparison_is_changed_on_its_own() -> None:
    source = module("""
        def f(a, b, c):
            return a >= b != c
    """)
    assert changes(source, operator="comparison") == ["`a >= b != c` -> `a > b != c`",
                                                      "`a >= b != c` -> `a >= b == c`"]


def test_identity_and_membership_tests_are_inverted() -> None:
    source = module("""
        def f(x, items):
            return x is None or x not in items
    """)
    assert changes(source, operator="comparison") == ["`x is None` -> `x is not None`",
                                                      "`x not in items` -> `x in items`"]


def test_and_and_or_are_exchanged_in_the_whole_expression() -> None:
    source = module("""
        def f(a, b, c):
            return a and b and c
    """)
    assert changes(source, operator="boolean") == ["`a and b and c` -> `a or b or c`"]


def test_arithmetic_operators_augmented_assignments_and_unary_minus_are_changed() -> None:
    source = module("""
        def f(total, x, y):
            total += x % y
            return -total
    """)
    assert changes(source, operator="arithmetic") == ["`total += x % y` -> `total -= x % y`",
                                                      "`x % y` -> `x // y`", "`-total` -> `total`"]
    assert changed_lines(source, only(source, "`total += x % y` -> `total -= x % y`").source) == [2]


def test_parentheses_are_added_where_the_new_operator_binds_differently() -> None:
    source = module("""
        def f(x, a, b):
            return x / a ** b, a | b ^ x
    """)
    assert "`a ** b` -> `(a * b)`" in changes(source, operator="arithmetic")  # x / (a * b), not (x / a) * b
    assert "`a | b ^ x` -> `a & (b ^ x)`" in changes(source, operator="arithmetic")


def test_numbers_booleans_and_strings_are_changed() -> None:
    source = module("""
        def f():
            return 3, 2.5, True, 'abc', b'', ""
    """)
    assert changes(source, operator="constant") == [
        "`3` -> `4`", "`3` -> `2`", "`3` -> `0`", "`3` -> `1`", "`3` -> `-1`",
        "`2.5` -> `3.5`", "`2.5` -> `1.5`", "`2.5` -> `0.0`", "`2.5` -> `1.0`", "`2.5` -> `-1.0`",
        "`True` -> `False`", "`'abc'` -> `''`", "`b''` -> `b'x'`", '`""` -> `"x"`']


def test_a_negative_number_put_under_a_tighter_operator_is_parenthesized() -> None:
    source = module("""
        def f(x):
            return 2 ** x
    """)
    assert "`2` -> `(-1)`" in changes(source, operator="constant")


def test_displays_are_emptied_but_assignment_targets_are_not() -> None:
    source = module("""
        def f(a, b):
            x, y = [a, b], {a: b}
            return {a}, (a, b)
    """)
    assert changes(source, operator="empty") == [
        "`[a, b], {a: b}` -> `()`", "`[a, b]` -> `[]`", "`{a: b}` -> `{}`",
        "`{a}, (a, b)` -> `()`", "`{a}` -> `set()`", "`(a, b)` -> `()`"]


def test_not_is_dropped_and_tests_are_negated() -> None:
    source = module("""
        def f(a, b):
            if not a:
                return 0
            while a or b:
                a = b if a else None
            assert b
    """)
    assert changes(source, operator="negation") == [
        "`not a` -> `a`", "`a or b` -> `not (a or b)`", "`a` -> `not a`", "`b` -> `not b`"]


def test_slice_bounds_move_by_one() -> None:
    source = module("""
        def f(x, n):
            return x[1:n]
    """)
    assert changes(source, operator="slice") == ["`x[1:n]` -> `x[2:n]`", "`x[1:n]` -> `x[0:n]`",
                                                 "`x[1:n]` -> `x[1:n + 1]`", "`x[1:n]` -> `x[1:n - 1]`"]


def test_a_removed_statement_takes_its_lines_with_it() -> None:
    source = module("""
        def f(x):
            total = 0
            total += (x +
                      1)  # the step
            return total
    """)
    assert changes(source, operator="statement") == [  # the last `return`: that is the `return None` change
        "`total = 0` -> removed", "`total += (x +` -> removed"]
    mutant = only(source, "`total += (x +` -> removed")
    removed = "    total += (x +\n              1)  # the step\n"
    assert (mutant.line, mutant.source) == (3, source.replace(removed, ""))


def test_the_only_statement_of_a_block_and_one_sharing_a_line_become_pass() -> None:
    source = module("""
        def f(x):
            if x:
                x = 1
            a = 1; b = 2
            return a + b
    """)
    assert only(source, "`x = 1` -> removed").source == source.replace("x = 1", "pass")
    assert only(source, "`b = 2` -> removed").source == source.replace("b = 2", "pass")


def test_an_elif_is_removed_as_a_whole() -> None:
    source = module("""
        def f(x):
            if x:
                return 1
            elif x is None:
                return 2
            return 3
    """)
    mutant = only(source, "`elif x is None:` -> removed")
    assert mutant.source == source.replace("    elif x is None:\n        return 2\n", "")


def test_a_returned_value_becomes_none_or_another_returned_value() -> None:
    source = module("""
        def f(x):
            def inner():
                return x
            if x:
                return 0
            return x + 1
    """)
    assert changes(source, operator="return") == [
        "`return x` -> `return None`",
        "`return 0` -> `return None`", "`return 0` -> `return x + 1`",
        "`return x + 1` -> `return None`", "`return x + 1` -> `return 0`"]


def test_adjacent_positional_arguments_are_exchanged() -> None:
    source = module("""
        def f(a, b):
            g(a, b, b, key=a)
            h(*a, b)
    """)
    assert changes(source, operator="arguments") == ["`g(a, b, b, key=a)` -> `g(b, a, b, key=a)`"]


def test_the_arguments_of_a_symmetric_call_are_not_exchanged() -> None:
    source = module("""
        def f(a, b):
            return max(a, b) + math.gcd(a, b)
    """)
    assert changes(source, operator="arguments") == []


def test_the_signature_decorators_annotations_and_docstrings_are_never_changed() -> None:
    source = module('''
        @cache(1 + 2)
        def f(x: int = 3, *, y: list[int] = [4]) -> dict[str, int]:
            """Doc 5 < 6."""
            z: Literal[7] = x
            def g(w=8) -> "text":
                """Inner doc."""
                global q
            return f"{z:>{9}}"
    ''')
    assert changes(source) == ["`z: Literal[7] = x` -> removed", "`return f\"{z:>{9}}\"` -> `return None`"]


def test_a_method_and_a_nested_function_are_found_by_their_qualified_names() -> None:
    source = module("""
        class C:
            def m(self):
                return 1

        def outer():
            def inner():
                return 2
            return inner

        if True:
            def guarded():
                return 3
    """)
    assert only(source, "`1` -> `0`", "C.m").line == 3
    assert only(source, "`2` -> `0`", "outer.inner").line == 7
    assert only(source, "`3` -> `0`", "guarded").line == 12


def test_columns_are_read_as_utf8_bytes() -> None:
    source = module("""
        def f(s, n):
            return "héllo ✓" + s if n < 1 else s
    """)
    mutant = only(source, "`n < 1` -> `n <= 1`")
    assert mutant.source == source.replace("n < 1", "n <= 1")
    assert only(source, '`"héllo ✓" + s` -> `"héllo ✓" - s`').line == 2


def test_line_endings_and_indentation_outside_the_change_are_kept() -> None:
    source = "class C:\r\n\tdef m(self, x):\r\n\t\treturn x + 1\r\n"
    mutant = only(source, "`x + 1` -> `x - 1`", "C.m")
    assert mutant.source == source.replace("x + 1", "x - 1")


def test_two_changes_giving_the_same_text_are_one_mutant() -> None:
    source = module("""
        def f(x):
            return x[1:]
    """)
    produced = [m.source for m in mutants_of(source, "f", limit=1000).mutants]
    assert produced.count(source.replace("x[1:]", "x[0:]")) == 1  # the slice's bound and the constant 1
    assert len(produced) == len(set(produced))


def test_a_change_that_leaves_the_same_tree_is_not_a_mutant() -> None:
    source = module("""
        def f():
            return pair(0x10, 16)
    """)
    assert changes(source, operator="arguments") == []


def test_a_mutant_that_does_not_compile_is_left_out() -> None:
    source = module("""
        def outer():
            count = 0
            def bump():
                nonlocal count
                count += 1
            return bump
    """)
    assert "`count = 0` -> removed" not in changes(source, "outer")  # no binding left for the nonlocal
    for mutant in mutants_of(source, "outer", limit=1000).mutants:
        compile(mutant.source, "<mutant>", "exec")


def test_the_cap_keeps_every_family_and_reports_the_total() -> None:
    source = module("""
        def f(items, limit):
            total = 0
            for item in items[1:]:
                if item > limit and item is not None:
                    total += item * 2
                    g(item, total)
            return [total, -limit]
    """)
    everything = mutants_of(source, "f", limit=1000)
    capped = mutants_of(source, "f", limit=len(OPERATORS))
    assert not everything.capped and everything.total == len(everything.mutants)
    assert capped.capped and capped.total == everything.total and len(capped.mutants) == len(OPERATORS)
    assert {m.operator for m in capped.mutants} == set(OPERATORS)
    assert [m.line for m in capped.mutants] == sorted(m.line for m in capped.mutants)


def test_a_limit_of_zero_gives_no_mutants_but_counts_them() -> None:
    result = mutants_of(SIGN, "f", limit=0)
    assert result.mutants == () and result.total > 0 and result.capped


def test_the_cap_is_deterministic() -> None:
    assert mutants_of(SIGN, "f", limit=3) == mutants_of(SIGN, "f", limit=3)


@pytest.mark.parametrize(("source", "qualname"), [
    ("def f(:\n", "f"),
    ("def f():\n    return 1\n", "g"),
    ("class C:\n    pass\n", "C"),
])
def test_a_source_that_does_not_parse_or_lacks_the_function_is_a_value_error(source: str, qualname: str
                                                                              ) -> None:
    with pytest.raises(ValueError, match=r"does not parse|no function"):
        mutants_of(source, qualname)


def test_every_mutant_names_a_documented_family() -> None:
    assert list(OPERATORS) == ["comparison", "boolean", "arithmetic", "constant", "empty", "negation",
                               "slice", "statement", "return", "arguments"]
    assert {m.operator for m in mutants_of(SIGN, "f", limit=1000).mutants} <= set(OPERATORS)


@pytest.mark.parametrize("library", [textwrap, shlex, difflib], ids=lambda m: m.__name__)
def test_every_function_of_a_real_module_gives_compiling_mutants_changed_only_inside_it(library) -> None:
    source = inspect.getsource(library)
    lines = source.splitlines(keepends=True)
    seen = set()
    for definition in definitions(ast.parse(source)):
        node = definition.node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or definition.qualname in seen:
            continue
        seen.add(definition.qualname)  # a name defined twice (under if/else) means its first definition
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        after = lines[node.end_lineno :]
        result = mutants_of(source, definition.qualname, limit=3)
        for mutant in result.mutants:
            compile(mutant.source, "<mutant>", "exec", dont_inherit=True)
            changed = mutant.source.splitlines(keepends=True)
            assert changed[: first - 1] == lines[: first - 1], mutant.change
            assert changed[len(changed) - len(after) :] == after or not after, mutant.change
            assert first <= mutant.line <= node.end_lineno and "\n" not in mutant.change


def test_a_long_change_is_shown_around_where_it_differs() -> None:
    source = module("""
        def f(left, right):
            return sum(x * 2 for x in left if x > 0) - sum(y * 3 for y in right if y > 0)
    """)
    [shown] = [c for c in changes(source, operator="arithmetic") if "sum(y" in c and c.count("sum") == 2]
    before, after = shown.split(" -> ")
    assert before != after and ") - sum(" in before and ") + sum(" in after
    assert len(before) <= 64 and before.startswith("`…")
