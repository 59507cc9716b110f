"""Condensed feedback and headlines, built from RunResult values directly (no sandbox needed)."""

from __future__ import annotations

from pycapsule.debugging.errors import condense, headline, shorten
from pycapsule.sandbox.api import ExampleFailure, ExceptionInfo, FunctionReport, RunResult


def failing(*failures: ExampleFailure, attempted: int = 3) -> RunResult:
    return RunResult("ok", (FunctionReport("add", attempted, len(failures), failures),))


WRONG = ExampleFailure("add", "add(1, 2)\n", 7, "3\n", "4\n")
RAISED = ExampleFailure(
    "add",
    "add(1, 0)\n",
    9,
    "1\n",
    "",
    ExceptionInfo("ZeroDivisionError", "division by zero", 14, "return a / b", "  File ...lib/x.py"),
)


def test_wrong_value_shows_example_expected_and_got() -> None:
    assert condense(failing(WRONG)) == "Failed example: add(1, 2)\nExpected: 3\nGot: 4"
    assert headline(failing(WRONG)) == "doctest failed (1 of 3): add(1, 2) expected 3, got 4"


def test_exception_shows_type_message_and_the_user_code_line_only() -> None:
    text = condense(failing(RAISED))
    assert text == "add(1, 0) raised ZeroDivisionError: division by zero\nat line 14: return a / b"
    assert "lib/x.py" not in text
    assert headline(failing(RAISED)) == (
        "doctest failed (1 of 3): add(1, 0) raised ZeroDivisionError: division by zero"
    )


def test_at_most_three_failures_are_shown_and_the_rest_counted() -> None:
    failures = [ExampleFailure("add", f"add({n}, 0)\n", 7 + n, f"{n}\n", "0\n") for n in range(5)]
    text = condense(failing(*failures, attempted=5))
    assert text.count("Failed example") == 3
    assert text.endswith("(2 more failing examples not shown.)")


def test_printing_nothing_is_said_plainly() -> None:
    silent = ExampleFailure("f", "f()\n", 3, "'x'\n", "")
    assert "Got: (nothing)" in condense(failing(silent))


def test_long_values_keep_both_ends_and_say_how_much_was_cut() -> None:
    got = "[" + ", ".join(str(n) for n in range(2000)) + "]\n"
    text = condense(failing(ExampleFailure("f", "f()\n", 3, "[]\n", got)))
    assert text.startswith("Failed example: f()\nExpected: []\nGot: [0, 1, 2")
    assert text.endswith("1998, 1999]")
    assert "characters cut]" in text
    assert len(text) < 600
    assert shorten("short") == "short"


def test_multi_line_values_are_indented_under_their_label() -> None:
    table = ExampleFailure("f", "print(f())\n", 3, "a\nb\n", "a\nc\n")
    assert condense(failing(table)) == (
        "Failed example: print(f())\nExpected: \n    a\n    b\nGot: \n    a\n    c"
    )


def test_timeout_is_one_fixed_sentence() -> None:
    result = RunResult("timeout", duration=10.02, detail="killed after 10.0 s wall-clock limit")
    assert condense(result) == (
        "The code did not finish within 10 s: look for an infinite loop or a very slow algorithm."
    )
    assert headline(result) == "timed out after 10 s"


def test_recursion_and_memory_are_fixed_sentences() -> None:
    overflow = ExceptionInfo("RecursionError", "maximum recursion", 5, "f(n)")
    deep = ExampleFailure("f", "f(5)\n", 3, "1\n", "", overflow)
    assert condense(failing(deep)) == (
        "f(5) hit the recursion limit (RecursionError): check the base case, "
        "or use a loop instead of deep recursion."
    )
    assert condense(RunResult("memory")).startswith("The code ran out of memory")
    assert headline(RunResult("memory")) == "ran out of memory"


def test_killed_and_sandbox_failures_say_what_happened() -> None:
    killed = RunResult("killed", detail="killed by signal 11 (SIGSEGV)")
    assert "killed by signal 11 (SIGSEGV)" in condense(killed)
    assert headline(killed) == "killed: killed by signal 11 (SIGSEGV)"
    crashed = RunResult("crashed", detail="the worker did not start")
    assert condense(crashed).endswith("this is not a fault in the code.")


def test_module_level_error_shows_the_line() -> None:
    error = ExceptionInfo("NameError", "name 'y' is not defined", 3, "x = y")
    result = RunResult("error", module_error=error)
    assert condense(result) == "The module raised NameError: name 'y' is not defined\nat line 3: x = y"
    assert headline(result) == "module error at line 3: NameError: name 'y' is not defined"


def test_passing_and_empty_runs() -> None:
    passed = RunResult("ok", (FunctionReport("add", 2, 0),))
    assert condense(passed) == "All 2 examples passed."
    assert headline(passed) == "doctests passed (2 examples)"
    nothing = RunResult("ok", (FunctionReport("add", 0, 0),))
    assert "not verified" in condense(nothing)
    assert headline(nothing) == "no doctests to run"


def test_unparsable_doctests_are_reported() -> None:
    result = RunResult("ok", (FunctionReport("add", 0, 0, parse_error="inconsistent leading whitespace"),))
    assert condense(result) == "The doctests of add cannot be parsed: inconsistent leading whitespace"
    assert headline(result) == "doctests of add cannot be parsed"


def test_headline_is_always_one_line() -> None:
    noisy = ExampleFailure("f", "f(\n  1)\n", 3, "a\nb\n" * 50, "c\n" * 50)
    line = headline(failing(noisy))
    assert "\n" not in line
    assert len(line) < 220


def test_a_long_value_in_the_headline_is_cut_between_words_around_the_difference() -> None:
    """The headline sits just above the full Expected/Got (issue 49 item 5): it never shows a value cut
    mid-way ('[N characters cut]'), but where the two differ, cut only at spaces, each cut marked '…'."""
    expected = "[" + ", ".join(str(n) for n in range(40)) + "]\n"
    got = expected.replace(" 37,", " 73,")
    line = headline(failing(ExampleFailure("f", "f()\n", 3, expected, got)))
    assert line == ("doctest failed (1 of 3): f() expected … 32, 33, 34, 35, 36, 37, 38, 39], "
                    "got … 32, 33, 34, 35, 36, 73, 38, 39]")
    sentence = "'The quick brown fox jumps over the lazy dog and keeps on running far away'\n"
    line = headline(failing(ExampleFailure("f", "f()\n", 3, sentence, "None\n")))
    assert line == ("doctest failed (1 of 3): f() expected 'The quick brown fox jumps over the lazy dog and "
                    "keeps on …, got None")


def test_an_example_of_the_projects_documentation_is_named_by_its_file_and_line() -> None:
    documented = ExampleFailure("add", "add(1, 2)\n", 12, "3\n", "4\n", document="README.md")
    assert condense(failing(documented)) == \
        "Failed example of the project's documentation: add(1, 2) (README.md:12)\nExpected: 3\nGot: 4"
    assert headline(failing(documented)) == \
        "doctest failed (1 of 3): add(1, 2) (README.md:12) expected 3, got 4"


def test_a_markdown_fence_taken_in_as_expected_output_is_said() -> None:
    fenced = ExampleFailure("add", "add(1, 2)\n", 12, "3\n```\n", "3\n", document="README.md")
    assert condense(failing(fenced)).endswith(
        "Note: the expected output ends in the code fence '```': doctest reads it up to a blank line, as "
        "pytest does; put a blank line before the fence.")
