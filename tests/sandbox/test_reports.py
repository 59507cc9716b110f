"""What a job reports: doctest failures with module lines, exceptions with the user-code line,
module errors, parse errors, targets. The same worker runs in every backend, so every backend."""

from __future__ import annotations

import pytest
from pycapsule.sandbox.api import Sandbox

from .conftest import EVERY_BACKEND, run

pytestmark = pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)

MODULE = '''"""A module."""

def add(a, b):
    """Add two numbers.

    >>> add(1, 2)
    3
    >>> add(2, 2)
    5
    """
    return a + b


def ratio(a, b):
    """
    >>> ratio(1, 0)
    0.0
    """
    return a / b


class Box:
    def size(self):
        """
        >>> Box().size()
        2
        """
        return 1
'''


def test_a_wrong_result_reports_the_example_its_line_and_expected_vs_got(sandbox: Sandbox) -> None:
    result = run(sandbox, MODULE, doctest_targets=("add",))
    assert result.status == "ok"
    assert not result.passed
    (report,) = result.functions
    assert (report.qualname, report.attempted, report.failed) == ("add", 2, 1)
    (failure,) = report.failures
    assert failure.source == "add(2, 2)"
    assert failure.line == 8
    assert MODULE.splitlines()[failure.line - 1].strip() == ">>> add(2, 2)"
    assert (failure.expected, failure.got) == ("5\n", "4\n")
    assert failure.exception is None


def test_an_exception_reports_type_message_and_the_user_code_line(sandbox: Sandbox) -> None:
    result = run(sandbox, MODULE, doctest_targets=("ratio",))
    failure = result.functions[0].failures[0]
    assert failure.line == 16
    assert failure.exception is not None
    assert failure.exception.type == "ZeroDivisionError"
    assert failure.exception.message == "division by zero"
    assert failure.exception.line == 19
    assert failure.exception.source_line == "return a / b"
    assert "line 19, in ratio" in failure.exception.traceback
    assert "doctest.py" not in failure.exception.traceback


def test_methods_are_targets_by_qualname_and_none_means_every_function(sandbox: Sandbox) -> None:
    method = run(sandbox, MODULE, doctest_targets=("Box.size",))
    assert [(f.qualname, f.failed) for f in method.functions] == [("Box.size", 1)]
    assert method.functions[0].failures[0].line == 25
    every = run(sandbox, MODULE, doctest_targets=None)
    assert {f.qualname: f.failed for f in every.functions} == {"add": 1, "ratio": 1, "Box.size": 1}


def test_no_targets_runs_the_module_only(sandbox: Sandbox) -> None:
    result = run(sandbox, MODULE + "\nprint('ran')\n", doctest_targets=())
    assert result.passed
    assert result.functions == ()
    assert result.stdout == "ran\n"


def test_passing_doctests_pass(sandbox: Sandbox) -> None:
    source = 'def f(x):\n    """\n    >>> f(2)\n    4\n'
    source += '    >>> [f(i) for i in range(3)]\n    [0, 1, 4]\n    """\n'
    source += "    return x * x if x > 1 else x\n"
    result = run(sandbox, source, doctest_targets=("f",))
    assert result.passed, result
    assert result.functions[0].attempted == 2


def test_a_humaneval_check_that_fails_is_an_error_with_the_module_error(sandbox: Sandbox) -> None:
    source = (
        "def candidate(x):\n    return x + 1\n\n"
        "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 4\n\n"
        "check(candidate)\n"
    )
    result = run(sandbox, source, doctest_targets=())
    assert result.status == "error"
    assert not result.passed
    assert result.module_error is not None
    assert result.module_error.type == "AssertionError"
    assert result.module_error.line == 6
    assert result.module_error.source_line == "assert candidate(2) == 4"


def test_a_syntax_error_is_a_module_error_with_its_line(sandbox: Sandbox) -> None:
    result = run(sandbox, "x = 1\ndef broken(:\n    pass\n")
    assert result.status == "error"
    assert result.module_error is not None
    assert result.module_error.type == "SyntaxError"
    assert result.module_error.line == 2
    assert result.module_error.source_line == "def broken(:"


def test_a_docstring_doctest_rejects_is_a_parse_error_not_a_crash(sandbox: Sandbox) -> None:
    source = 'def f():\n    """\n    >>> f(\n  ... )\n    1\n    """\n    return 1\n'
    result = run(sandbox, source, doctest_targets=("f",))
    assert result.status == "ok"
    (report,) = result.functions
    assert report.parse_error is not None and "inconsistent" in report.parse_error
    assert not result.passed


def test_an_unknown_target_is_reported_by_name(sandbox: Sandbox) -> None:
    result = run(sandbox, MODULE, doctest_targets=("missing",))
    assert result.functions[0].parse_error == "no function or class named 'missing' in the module"
    assert not result.passed


def test_the_module_runs_as_main_by_default_and_under_its_name_when_asked(sandbox: Sandbox) -> None:
    source = "print(__name__)\nif __name__ == '__main__':\n    print('main block')\n"
    assert run(sandbox, source).stdout == "__main__\nmain block\n"
    assert run(sandbox, source, module_name="mymod").stdout == "mymod\n"


def test_an_expected_exception_in_a_doctest_passes(sandbox: Sandbox) -> None:
    source = 'def f():\n    """\n    >>> f()\n    Traceback (most recent call last):\n    ...\n'
    source += '    ValueError: no\n    """\n    raise ValueError("no")\n'
    assert run(sandbox, source, doctest_targets=("f",)).passed


def test_print_output_is_captured_per_stream(sandbox: Sandbox) -> None:
    result = run(sandbox, "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    assert (result.stdout, result.stderr) == ("out\n", "err\n")
    assert not result.output_truncated


def test_functions_finished_before_a_hang_are_still_reported(sandbox: Sandbox) -> None:
    source = '''
def good():
    """
    >>> good()
    1
    """
    return 1

def hang():
    """
    >>> hang()
    """
    while True:
        pass

def later():
    """
    >>> later()
    2
    """
    return 2
'''
    result = run(sandbox, source, timeout=2)
    assert result.status == "timeout"
    assert "`hang()` (line 11)" in result.detail
    assert [(f.qualname, f.attempted, f.failed) for f in result.functions] == [("good", 1, 0)]
    assert not result.passed


NEEDS_WHAT_IS_NOT_THERE = '''
import urllib.request


def fetch(url):
    """
    >>> fetch("http://pycapsule-test.invalid/")
    b''
    """
    return urllib.request.urlopen(url, timeout=5).read()


def load(path):
    """
    >>> load("data/prices.csv")
    ''
    """
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as error:
        raise ValueError(f"cannot load {path}") from error


def parse(text):
    """
    >>> parse("x")
    0
    """
    return int(text)
'''


def test_an_exception_that_met_a_missing_network_or_file_says_so_through_its_chain(sandbox: Sandbox) -> None:
    result = run(sandbox, NEEDS_WHAT_IS_NOT_THERE)
    exceptions = {f.qualname: f.failures[0].exception for f in result.functions}
    fetch, load, parse = exceptions["fetch"], exceptions["load"], exceptions["parse"]
    assert fetch is not None and fetch.type == "URLError"
    assert fetch.missing is not None and fetch.missing.kind == "network"  # the gaierror it was raised from
    assert load is not None and load.type == "ValueError"
    assert load.missing is not None and load.missing.kind == "file"
    assert "data/prices.csv" in load.missing.detail
    assert parse is not None and parse.missing is None


AN_EXCEPTION_THAT_FIGHTS_BACK = '''
class Odd(OSError):
    @property
    def errno(self):
        raise SystemExit("looked at")


def odd():
    """
    >>> odd()
    1
    """
    first, second = Odd("first"), ValueError("second")
    first.__context__, second.__context__ = second, first  # a cycle
    raise first
'''


def test_an_exception_that_breaks_when_looked_at_is_still_reported(sandbox: Sandbox) -> None:
    result = run(sandbox, AN_EXCEPTION_THAT_FIGHTS_BACK)
    [failure] = result.functions[0].failures
    assert failure.exception is not None and failure.exception.type == "Odd"
    assert failure.exception.missing is None
