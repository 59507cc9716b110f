"""A documentation file's examples in the sandbox (`Job.documents`): they run as pytest runs a text file, in
a namespace of their own after the module is imported, so `from mod import f` gets the job's module (the
candidate); only the examples the host chose (`judged`) count, the earlier ones set up unjudged and none
after the last runs; their report is the function's, each failure naming its file and line."""

from __future__ import annotations

import pytest
from pycapsule.sandbox.api import DoctestItem, Sandbox

from .conftest import run

pytestmark = pytest.mark.parametrize("sandbox", ["bwrap", "unsafe-subprocess"], indirect=True)

MODULE = '''
HELPER = "module global"


def double(x):
    """
    >>> double(2)
    4
    """
    return x * 2


def broken(x):
    return -1
'''

README = """\
# docmod

>>> from docmod import double, broken
>>> broken(1)
1

Doubling:

>>> double(21)
42
>>> __name__
'__main__'

An example after the last one of `double`:

>>> 1 / 0
"""


def readme(judged: tuple[int, ...]) -> DoctestItem:
    return DoctestItem("double", README, 1, document="README.md", judged=judged)


def test_the_chosen_examples_count_the_earlier_ones_only_set_up_and_none_runs_after_them(
        sandbox: Sandbox) -> None:
    result = run(sandbox, MODULE, module_name="docmod", doctest_targets=("double",),
                 documents=(readme((9, 11)),))

    assert result.passed, result
    [report] = result.functions
    assert (report.qualname, report.attempted, report.documented, report.documents) == \
        ("double", 3, 2, ("README.md",)), "one report: the docstring's example and the README's two"


def test_a_failing_documentation_example_names_its_file_and_line(sandbox: Sandbox) -> None:
    wrong = MODULE.replace("return x * 2", "return x * 3")
    result = run(sandbox, wrong, module_name="docmod", doctest_targets=("double",),
                 documents=(readme((9, 11)),))

    [report] = result.functions
    assert (report.attempted, report.failed) == (3, 2)
    docstring, documentation = report.failures
    assert (docstring.document, documentation.document, documentation.line) == (None, "README.md", 9)
    assert (documentation.source, documentation.expected, documentation.got) == \
        ("double(21)", "42\n", "63\n")


def test_they_run_in_a_namespace_of_their_own_not_the_modules_globals(sandbox: Sandbox) -> None:
    text = ">>> HELPER\n'module global'\n"
    item = DoctestItem("double", text, 1, document="docs/x.md", judged=(1,))
    result = run(sandbox, MODULE, module_name="docmod", doctest_targets=(), documents=(item,))

    [report] = result.functions
    [failure] = report.failures
    assert failure.exception is not None and failure.exception.type == "NameError"


def test_they_do_not_run_when_the_job_names_exactly_what_runs(sandbox: Sandbox) -> None:
    item = DoctestItem("double", "\n>>> double(2)\n4\n", 1)
    result = run(sandbox, MODULE, module_name="docmod", doctests=(item,), documents=(readme((9, 11)),))

    [report] = result.functions
    assert (report.attempted, report.documents) == (1, ())


def test_a_documentation_example_that_hangs_is_named_in_the_timeout(sandbox: Sandbox) -> None:
    hangs = MODULE.replace("return x * 2", "while True:\n        pass")
    result = run(sandbox, hangs, module_name="docmod", doctest_targets=(), documents=(readme((9,)),),
                 timeout=2.0)

    assert result.status == "timeout"
    assert "`double(21)` (README.md:9)" in result.detail, result.detail
