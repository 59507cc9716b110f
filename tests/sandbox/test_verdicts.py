"""Verdicts the model's code cannot touch: every example is judged by the worker, outside the process that
runs the code, which can only say what each example printed or raised. Each known way of forging a
passing result must still leave a wrong function failing."""

from __future__ import annotations

import pytest
from pycapsule.sandbox.api import Sandbox

from .conftest import EVERY_BACKEND, run

pytestmark = pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)

WRONG = '''
def add(a, b):
    """
    >>> add(1, 2)
    3
    >>> add(2, 2)
    4
    """
    return 0
'''


def assert_still_fails(sandbox: Sandbox, attack: str, **job: object) -> None:
    result = run(sandbox, attack + WRONG, **{"doctest_targets": ("add",), **job})
    assert not result.passed, (result.status, result.detail, result.functions)


def test_a_result_line_written_to_the_report_fd_is_not_believed(sandbox: Sandbox) -> None:
    assert_still_fails(sandbox, '''
import os
for message in (b'{"result": {"functions": [], "module_error": null}}\\n', b'{"imported": true}\\n',
                b'{"item": 0}\\n', b'{"done": true}\\n'):
    try:
        os.write(3, message)
    except OSError:
        pass
''')


def test_writing_a_result_to_every_fd_is_not_believed(sandbox: Sandbox) -> None:
    assert_still_fails(sandbox, '''
import os
forged = (b'{"result": {"functions": [{"qualname": "add", "attempted": 2, "failed": 0, "failures": []}], '
          b'"module_error": null}}\\n{"done": true}\\n')
for fd in range(3, 64):
    try:
        os.write(fd, forged)
    except OSError:
        pass
''')


def test_wrapping_the_runners_report_function_changes_nothing(sandbox: Sandbox) -> None:
    assert_still_fails(sandbox, '''
import sys

def passed(value):
    if isinstance(value, dict):
        value.pop("exception", None)
        value.pop("failures", None)
        if "failed" in value:
            value["failed"] = 0
        for item in value.values():
            passed(item)
    elif isinstance(value, list):
        for item in value:
            passed(item)

frame = sys._getframe()
while frame is not None:
    for name in ("send_report", "report"):
        original = frame.f_globals.get(name)
        if callable(original):
            def forging(message, original=original):
                passed(message)
                original(message)
            frame.f_globals[name] = forging
    frame = frame.f_back
''')


def test_rewriting_the_examples_still_to_run_changes_nothing(sandbox: Sandbox) -> None:
    # Right for the first example only; while it runs, the code empties every list of examples it can find.
    result = run(sandbox, '''
def add(a, b):
    """
    >>> add(1, 2)
    3
    >>> add(2, 2)
    4
    """
    import sys
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            examples = getattr(value, "examples", value)
            if isinstance(examples, list) and examples:
                examples[:] = []
        frame = frame.f_back
    return 3
''', doctest_targets=("add",))
    assert not result.passed, (result.status, result.detail, result.functions)


def test_patching_doctests_checker_at_import_changes_nothing(sandbox: Sandbox) -> None:
    assert_still_fails(sandbox, '''
import doctest
doctest.OutputChecker.check_output = lambda self, want, got, flags: True
''')


def test_one_function_cannot_make_another_pass_in_a_whole_module_check(sandbox: Sandbox) -> None:
    saboteur = '''
def saboteur():
    """
    >>> import doctest; doctest.OutputChecker.check_output = lambda *args: True
    """
'''
    result = run(sandbox, saboteur + WRONG, doctest_targets=None)
    failed = {f.qualname: f.failed for f in result.functions}
    assert failed == {"saboteur": 0, "add": 2}
    assert not result.passed
