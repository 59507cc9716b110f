"""Suggested examples: for a change the examples do not catch, a call on which the body and the changed body
show different things, offered as a doctest example with the body's own output (the real default sandbox
runs the calls), and written into the docstring after its last example with nothing else changed."""

from __future__ import annotations

import doctest
import threading
from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.executor import execute
from pycapsule.sandbox.api import Job, RunResult, Sandbox
from pycapsule.strength.examples import SuggestedExample, add_examples, probe_calls, suggest_examples
from pycapsule.strength.mutants import Mutant, mutants_of

LATE_FEE = '''def late_fee(days):
    """The fee for returning a book `days` days late.

    >>> late_fee(3)
    1.5
    """
    return min(days * 0.5, 10.0)
'''
TRACEBACK = "Traceback (most recent call last):\n    ...\n"


def mutant(source: str, change: str) -> Mutant:
    """The body's mutant making `change` ("`10.0` -> `11.0`"), as the mutants module builds it."""
    found = [m for m in mutants_of(source, "late_fee").mutants if m.change == change]
    assert len(found) == 1, [m.change for m in mutants_of(source, "late_fee").mutants]
    return found[0]


class CountingSandbox:
    """The real sandbox, counting the jobs it is given."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox, self.name, self.jobs = sandbox, sandbox.name, 0

    def run(self, job: Job, cancel: threading.Event | None = None) -> RunResult:
        self.jobs += 1
        return self.sandbox.run(job, cancel)

    def close(self) -> None:
        pass


def suggest(sandbox: Sandbox, source: str, survivors: list[Mutant], path: Path | None = None,
            **options: object) -> tuple[SuggestedExample, ...]:
    capsule = capsule_by_qualname(source, "late_fee", path)
    return suggest_examples(sandbox, capsule, source, survivors, timeout=10.0, **options)  # type: ignore[arg-type]


def run_docstring(source: str, qualname: str) -> doctest.TestResults:
    """The function's doctests run in this process on the module's code (pure functions the test wrote)."""
    namespace: dict[str, object] = {"__name__": "suggested"}
    exec(compile(source, "suggested.py", "exec"), namespace)
    function = namespace[qualname]
    runner = doctest.DocTestRunner(optionflags=0)
    for test in doctest.DocTestFinder(recurse=False).find(function, qualname, globs=namespace):
        runner.run(test)
    return runner.summarize(verbose=False)


# probe_calls: which calls are tried


def test_each_argument_is_changed_on_its_own_and_no_call_an_example_makes_is_tried() -> None:
    source = LATE_FEE.replace("    1.5\n", "    1.5\n    >>> late_fee( 4 )\n    2.0\n")
    calls = probe_calls(capsule_by_qualname(source, "late_fee"))
    assert calls == ("late_fee(2)", "late_fee(0)", "late_fee(-1)", "late_fee(6)", "late_fee(13)",
                     "late_fee(30)", "late_fee(103)", "late_fee(5)", "late_fee(8)", "late_fee(14)",
                     "late_fee(40)", "late_fee(104)")
    assert probe_calls(capsule_by_qualname(source, "late_fee"), limit=3) == calls[:3]


def test_strings_lists_and_flags_are_varied_and_keywords_stay_keywords() -> None:
    source = '''def pad(text, items, *, loud=False):
    """
    >>> pad('ab', [1, 2], loud=True)
    'AB12'
    """
'''
    assert probe_calls(capsule_by_qualname(source, "pad")) == (
        "pad('', [1, 2], loud=True)", "pad('a', [1, 2], loud=True)", "pad('abab', [1, 2], loud=True)",
        "pad('AB', [1, 2], loud=True)", "pad(' ab', [1, 2], loud=True)", "pad('ab ', [1, 2], loud=True)",
        "pad('ab', [], loud=True)", "pad('ab', [1], loud=True)", "pad('ab', [2, 1], loud=True)",
        "pad('ab', [1, 2, 2], loud=True)", "pad('ab', [1, 2], loud=False)")


def test_floats_try_the_midpoints_between_the_examples_first() -> None:
    source = '''def scale(x):
    """
    >>> scale(1.0)
    2.0
    >>> scale(3.0)
    6.0
    >>> scale(x=5.0)
    10.0
    """
'''
    assert probe_calls(capsule_by_qualname(source, "scale")) == (
        "scale(2.0)", "scale(0.0)", "scale(-1.0)", "scale(10.0)", "scale(4.0)", "scale(-3.0)", "scale(30.0)",
        "scale(x=6.0)", "scale(x=4.0)", "scale(x=0.0)", "scale(x=-5.0)", "scale(x=50.0)")


LIBRARY = '''class Library:
    def __init__(self, cap=10.0):
        self.cap = cap

    def late_fee(self, days):
        """The fee for returning a book `days` days late.

        >>> library = Library()
        >>> library.late_fee(3)
        1.5
        """
        return min(days * 0.5, self.cap)
'''


def test_a_methods_calls_keep_a_receiver_that_stands_alone_written_in_place_of_its_name() -> None:
    calls = probe_calls(capsule_by_qualname(LIBRARY, "Library.late_fee"))
    assert calls[:3] == ("Library().late_fee(4)", "Library().late_fee(2)", "Library().late_fee(0)")
    assert "Library().late_fee(3)" not in calls  # the example's own call, its receiver in place
    chained = LIBRARY.replace(">>> library = Library()\n        >>> library.late_fee(3)",
                              ">>> Library(cap=5.0).late_fee(3)")
    assert probe_calls(capsule_by_qualname(chained, "Library.late_fee"))[0] == "Library(cap=5.0).late_fee(4)"


def test_a_receiver_that_does_not_stand_alone_gets_no_probes() -> None:
    made_elsewhere = LIBRARY.replace("library = Library()", "library = open_library(Library)")
    assert probe_calls(capsule_by_qualname(made_elsewhere, "Library.late_fee")) == ()
    rebound = "library = Library()\n        >>> library, other = other, 1"
    changed = LIBRARY.replace("library = Library()", rebound)
    assert probe_calls(capsule_by_qualname(changed, "Library.late_fee")) == ()
    a_function_of_that_name = LIBRARY.replace("library.late_fee(3)", "late_fee(3)")
    assert probe_calls(capsule_by_qualname(a_function_of_that_name, "Library.late_fee")) == ()


def test_coroutines_and_calls_without_literal_arguments_get_no_probes() -> None:
    named = LATE_FEE.replace(">>> late_fee(3)", ">>> days = 3\n    >>> late_fee(days)")
    assert probe_calls(capsule_by_qualname(named, "late_fee")) == ()
    coroutine = LATE_FEE.replace("def late_fee", "async def late_fee")
    assert probe_calls(capsule_by_qualname(coroutine, "late_fee")) == ()


# suggest_examples: the real sandbox runs the calls


def test_a_surviving_change_of_the_cap_gets_a_call_that_shows_the_body_s_value(sandbox: Sandbox) -> None:
    counting = CountingSandbox(sandbox)
    survivor = mutant(LATE_FEE, "`10.0` -> `11.0`")
    found = suggest(counting, LATE_FEE, [survivor])
    assert found == (SuggestedExample("late_fee(30)", "10.0", "11.0", 7, "`10.0` -> `11.0`"),)
    assert found[0].doctest() == ">>> late_fee(30)\n10.0\n"
    assert counting.jobs == 3  # the body twice, the survivor once: every probe in one job


def test_one_example_per_survivor_no_call_twice_and_at_most_limit(sandbox: Sandbox) -> None:
    eleven, nine = mutant(LATE_FEE, "`10.0` -> `11.0`"), mutant(LATE_FEE, "`10.0` -> `9.0`")
    found = suggest(sandbox, LATE_FEE, [eleven, nine])
    assert [(e.call, e.output, e.mutant_output, e.line) for e in found] == [
        ("late_fee(30)", "10.0", "11.0", 7), ("late_fee(103)", "10.0", "9.0", 7)]
    counting = CountingSandbox(sandbox)
    assert len(suggest(counting, LATE_FEE, [eleven, nine], limit=1)) == 1
    assert counting.jobs == 3


def test_a_change_no_call_can_tell_apart_gets_no_example(sandbox: Sandbox) -> None:
    source = LATE_FEE.replace("min(days * 0.5", "min(abs(-days) * 0.5")
    [same] = [m for m in mutants_of(source, "late_fee").mutants if m.change == "`-days` -> `days`"]
    assert suggest(sandbox, source, [same]) == ()


def test_a_call_that_shows_nothing_is_offered_with_no_output_and_passes_once_added(sandbox: Sandbox) -> None:
    source = '''def remind(days):
    """Says how late a book is, after two weeks.

    >>> remind(3)
    >>> remind(20)
    20 days late
    """
    if 14 < days < 100:
        print(f"{days} days late")
'''
    wider = Mutant(8, "`100` -> `1000`", "constant", source.replace("< 100", "< 1000"))
    capsule = capsule_by_qualname(source, "remind")
    found = suggest_examples(sandbox, capsule, source, [wider], timeout=10.0)
    assert found == (SuggestedExample("remind(103)", "", "103 days late", 8, "`100` -> `1000`"),)
    assert found[0].doctest() == ">>> remind(103)\n"
    added = add_examples(source, "remind", found)
    assert added == source.replace("    20 days late\n", "    20 days late\n    >>> remind(103)\n")
    assert run_docstring(added, "remind") == doctest.TestResults(failed=0, attempted=3)


def test_a_survivor_whose_module_hangs_is_passed_over(sandbox: Sandbox) -> None:
    hangs = Mutant(7, "a loop", "statement", LATE_FEE.replace(
        "    return min", "    while days > 20:\n        pass\n    return min"))
    capsule = capsule_by_qualname(LATE_FEE, "late_fee")
    found = suggest_examples(sandbox, capsule, LATE_FEE, [hangs, mutant(LATE_FEE, "`10.0` -> `11.0`")],
                             timeout=3.0)
    assert [e.call for e in found] == ["late_fee(30)"]


def test_a_call_that_raises_is_shown_as_doctest_shows_an_exception_and_passes_once_added(
        sandbox: Sandbox) -> None:
    source = LATE_FEE.replace(
        "    return min", "    if days < 0:\n        raise ValueError('days must be >= 0')\n    return min")
    found = suggest(sandbox, source, [mutant(source, "`0` -> `-1`"),
                                      mutant(source, "`days < 0` -> `days <= 0`")])
    assert [(e.call, e.output, e.mutant_output) for e in found] == [
        ("late_fee(-1)", f"{TRACEBACK}ValueError: days must be >= 0", "-0.5"),
        ("late_fee(0)", "0.0", f"{TRACEBACK}ValueError: days must be >= 0")]
    added = add_examples(source, "late_fee", found)
    assert run_docstring(added, "late_fee") == doctest.TestResults(failed=0, attempted=3)
    assert execute(sandbox, capsule_by_qualname(added, "late_fee"), added, 10.0).passed


def test_an_exception_class_of_the_module_is_named_by_its_module_as_doctest_names_it(
        sandbox: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'fees'\n")
    path = tmp_path / "fees.py"
    source = "class TooLate(ValueError):\n    pass\n\n\n" + LATE_FEE.replace(
        "    return min", "    if days > 60:\n        raise TooLate(days)\n    return min")
    path.write_text(source)
    found = suggest(sandbox, source, [mutant(source, "`raise TooLate(days)` -> removed")], path)
    assert [(e.call, e.output) for e in found] == [("late_fee(103)", f"{TRACEBACK}fees.TooLate: 103")]
    added = add_examples(source, "late_fee", found, path)
    assert execute(sandbox, capsule_by_qualname(added, "late_fee", path), added, 10.0).passed


def test_a_call_whose_output_changes_from_run_to_run_is_not_offered(sandbox: Sandbox) -> None:
    source = "import random\n\n\n" + LATE_FEE.replace(
        "    return min", "    if days == 30:\n        return random.random()\n    return min")
    found = suggest(sandbox, source, [mutant(source, "`10.0` -> `11.0`")])
    assert [(e.call, e.output) for e in found] == [("late_fee(103)", "10.0")]  # late_fee(30) is random


def test_an_output_holding_an_address_is_not_offered(sandbox: Sandbox) -> None:
    source = LATE_FEE.replace("    return min", "    if days == 30:\n        return object()\n    return min")
    found = suggest(sandbox, source, [mutant(source, "`10.0` -> `11.0`")])
    assert [e.call for e in found] == ["late_fee(103)"]


def test_a_cancelled_search_runs_nothing(sandbox: Sandbox) -> None:
    counting, cancel = CountingSandbox(sandbox), threading.Event()
    cancel.set()
    assert suggest(counting, LATE_FEE, [mutant(LATE_FEE, "`10.0` -> `11.0`")], cancel=cancel) == ()
    assert counting.jobs == 0


# add_examples: written into the docstring, nothing else changed


CAPPED = SuggestedExample("late_fee(30)", "10.0", "11.0", 7, "`10.0` -> `11.0`")
RAISES = SuggestedExample("late_fee(-1)", f"{TRACEBACK}ValueError: negative", "-0.5", 7, "`<` -> `<=`")


def test_examples_go_after_the_last_example_indented_as_it_and_the_rest_is_untouched() -> None:
    source = "import math\n\n\n" + LATE_FEE.replace("    1.5\n", "    1.5\n\n    Capped at ten.\n")
    added = add_examples(source, "late_fee", [CAPPED])
    at = source.index("    1.5\n") + len("    1.5\n")
    assert added == source[:at] + "    >>> late_fee(30)\n    10.0\n" + source[at:]
    assert run_docstring(added, "late_fee") == doctest.TestResults(failed=0, attempted=2)


def test_a_crlf_module_stays_crlf() -> None:
    source = LATE_FEE.replace("\n", "\r\n")
    added = add_examples(source, "late_fee", [CAPPED, RAISES])
    assert added.count("\n") == added.count("\r\n")
    assert added.replace("\r\n", "\n") == add_examples(LATE_FEE, "late_fee", [CAPPED, RAISES])
    at = source.index("    1.5\r\n") + len("    1.5\r\n")
    assert added == source[:at] + (
        "    >>> late_fee(30)\r\n    10.0\r\n    >>> late_fee(-1)\r\n"
        "    Traceback (most recent call last):\r\n        ...\r\n    ValueError: negative\r\n") + source[at:]


def test_tab_indented_docstrings_keep_their_tabs() -> None:
    source = LATE_FEE.replace("    ", "\t")
    added = add_examples(source, "late_fee", [CAPPED])
    assert added == source.replace("\t1.5\n", "\t1.5\n\t>>> late_fee(30)\n\t10.0\n")


def test_closing_quotes_on_the_last_output_line_move_to_their_own_line() -> None:
    source = LATE_FEE.replace('    1.5\n    """', '    1.5"""')
    added = add_examples(source, "late_fee", [CAPPED])
    assert added == source.replace('    1.5"""', '    1.5\n    >>> late_fee(30)\n    10.0\n    """')
    assert run_docstring(added, "late_fee") == doctest.TestResults(failed=0, attempted=2)


def test_a_docstring_without_examples_gets_them_before_its_closing_quotes() -> None:
    prose = '''def late_fee(days):
    """The fee for returning a book `days` days late.

    Half a unit a day, ten at most.
    """
    return min(days * 0.5, 10.0)
'''
    assert add_examples(prose, "late_fee", [CAPPED]) == prose.replace(
        "at most.\n", "at most.\n\n    >>> late_fee(30)\n    10.0\n")
    one_line = 'def late_fee(days):\n    """The fee."""\n    return min(days * 0.5, 10.0)\n'
    added = add_examples(one_line, "late_fee", [CAPPED])
    assert added == one_line.replace('fee."""', 'fee.\n\n    >>> late_fee(30)\n    10.0\n    """')
    assert run_docstring(added, "late_fee") == doctest.TestResults(failed=0, attempted=1)


def test_backslashes_and_quotes_are_escaped_so_doctest_reads_the_output_back() -> None:
    source = '''def path(parts):
    """
    >>> path(['a'])
    'a'
    """
    return '\\\\'.join(parts)
'''
    joined = SuggestedExample("path(['a', 'b'])", "'a\\\\b'", "'a/b'", 6, "`'\\\\'` -> `'/'`")
    added = add_examples(source, "path", [joined])
    assert "    >>> path(['a', 'b'])\n    'a\\\\\\\\b'\n" in added
    assert run_docstring(added, "path") == doctest.TestResults(failed=0, attempted=2)
    raw = source.replace('    """\n    >>> path', '    r"""\n    >>> path')
    added = add_examples(raw, "path", [joined])
    assert "    >>> path(['a', 'b'])\n    'a\\\\b'\n" in added
    assert run_docstring(added, "path") == doctest.TestResults(failed=0, attempted=2)
    quoted = SuggestedExample("path(['\"\"\"'])", "'\"\"\"'", "''", 6, "change")
    assert run_docstring(add_examples(source, "path", [quoted]), "path") == doctest.TestResults(0, 2)


def test_a_function_without_a_docstring_cannot_take_examples() -> None:
    with pytest.raises(ValueError, match="docstring"):
        add_examples("def late_fee(days):\n    return days\n", "late_fee", [CAPPED])


def test_a_methods_surviving_change_gets_an_example_that_passes_once_added(sandbox: Sandbox) -> None:
    capsule = capsule_by_qualname(LIBRARY, "Library.late_fee")
    cap = Mutant(12, "`self.cap` -> `11.0`", "constant", LIBRARY.replace("self.cap)", "11.0)"))
    found = suggest_examples(sandbox, capsule, LIBRARY, [cap], timeout=10.0)
    assert found == (SuggestedExample("Library().late_fee(30)", "10.0", "11.0", 12, "`self.cap` -> `11.0`"),)
    example = "        1.5\n        >>> Library().late_fee(30)\n        10.0\n"
    added = add_examples(LIBRARY, "Library.late_fee", found)
    assert added == LIBRARY.replace("        1.5\n", example)
    capsule = capsule_by_qualname(added, "Library.late_fee")
    assert execute(sandbox, capsule, added, 10.0).passed
    assert not execute(sandbox, capsule, cap.source.replace("        1.5\n", example), 10.0).passed
