"""Verdicts the model's code cannot touch: every example is judged by the worker, outside the process that
runs the code, which can only say what each example printed or raised. Each known way of forging a
passing result must still leave a wrong function failing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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


# The attacks below run inside the body, while an example calls it: the code under test is in the runner's
# own process and may write any of its descriptors, patch any module and exit as it likes.

def stock_doctest_fails(source: str, tmp_path: Path) -> bool:
    """What `python -m doctest` says of the same file (on the host: these programs are this file's own)."""
    module = tmp_path / "stock_check.py"
    module.write_text(source)
    done = subprocess.run([sys.executable, "-m", "doctest", str(module)], capture_output=True, timeout=60)
    return done.returncode != 0


def wrong_add(attack: str) -> str:
    """`add` that returns 0, with `attack` run at the start of each call."""
    body = textwrap.indent(textwrap.dedent(attack).strip(), "    ")
    return f'''
def add(a, b):
    """
    >>> add(1, 2)
    3
    >>> add(2, 2)
    4
    """
{body}
    return 0
'''


FORGED_REPORT = '''
import json, os
# what the runner would write from here on, had the body been right
forged = [{"out": [0, 0], "got": "3\\n"}, {"run": [0, 1]}, {"out": [0, 1], "got": "4\\n"}, {"done": True}]
for message in forged:
    try:
        os.write(3, (json.dumps(message) + "\\n").encode())
    except OSError:
        pass
'''


def test_a_report_forged_in_order_then_os_exit_fails(sandbox: Sandbox, tmp_path: Path) -> None:
    source = wrong_add(FORGED_REPORT + "os._exit(0)")
    result = run(sandbox, source, doctest_targets=("add",))
    assert not result.passed, (result.status, result.detail, result.functions)
    assert result.status == "killed"


def test_a_report_forged_in_order_then_the_channel_silenced_fails(sandbox: Sandbox, tmp_path: Path) -> None:
    source = wrong_add(FORGED_REPORT + "os.dup2(os.open(os.devnull, os.O_WRONLY), 3)")
    result = run(sandbox, source, doctest_targets=("add",))
    assert not result.passed, (result.status, result.detail, result.functions)
    assert stock_doctest_fails(source, tmp_path)


def test_patching_json_inside_the_body_changes_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    source = wrong_add('''
import json
original = json.JSONEncoder.encode
def forging(self, value):
    if isinstance(value, dict) and "out" in value:
        value = {**value, "got": ["3\\n", "4\\n"][value["out"][1]]}
        value.pop("exception", None)
    return original(self, value)
json.JSONEncoder.encode = forging
json.dumps = lambda value, **options: forging(json.JSONEncoder(**options), value)
''')
    result = run(sandbox, source, doctest_targets=("add",))
    assert [f.failed for f in result.functions] == [2], (result.status, result.detail, result.functions)
    assert stock_doctest_fails(source, tmp_path)


def test_patching_doctests_captured_output_inside_the_body_changes_nothing(sandbox: Sandbox,
                                                                           tmp_path: Path) -> None:
    source = wrong_add('''
import doctest, itertools
expected = itertools.cycle(["3\\n", "4\\n"])
doctest._SpoofOut.getvalue = lambda self: next(expected)
''')
    result = run(sandbox, source, doctest_targets=("add",))
    assert [f.failed for f in result.functions] == [2], (result.status, result.detail, result.functions)


def test_a_body_that_replaces_the_display_hook_is_not_passed_though_stock_doctest_is_fooled(
        sandbox: Sandbox, tmp_path: Path) -> None:
    source = wrong_add('''
import sys
def shows_what_is_expected(value, answers={0: "3"}):
    if value is not None:
        sys.stdout.write(answers.get(value, repr(value)) + "\\n")
answers = {1: "3", 2: "4"}
sys.displayhook = sys.__displayhook__ = lambda value: shows_what_is_expected(value and value, {0: answers[a]})
''')
    result = run(sandbox, source, doctest_targets=("add",))
    assert not result.passed, (result.status, result.detail, result.functions)
    notes = [failure.note for function in result.functions for failure in function.failures]
    assert notes and all("display hook" in (note or "") for note in notes), result.functions
    assert not stock_doctest_fails(source, tmp_path)  # stock doctest is fooled: pycapsule says why it is not


def test_an_exception_whose_message_installs_a_display_hook_is_not_passed(sandbox: Sandbox) -> None:
    result = run(sandbox, '''
import sys

class Refused(ValueError):
    def __str__(self):
        sys.displayhook = lambda value: value is not None and sys.stdout.write("4\\n")
        return "no"

def add(a, b):
    """
    >>> add(1, -1)
    Traceback (most recent call last):
    ...
    ValueError: no
    >>> add(2, 2)
    4
    """
    if b < 0:
        raise Refused()
    return 0
''', doctest_targets=("add",))
    assert not result.passed, (result.status, result.detail, result.functions)
    notes = [failure.note for function in result.functions for failure in function.failures]
    assert any("display hook" in (note or "") for note in notes), result.functions


def test_output_and_lone_surrogates_are_judged_as_doctest_judges_them(sandbox: Sandbox) -> None:
    result = run(sandbox, '''
def show(name):
    """
    >>> show("caf\\\\udce9")
    caf\\udce9
    >>> print("no newline", end="")
    no newline
    >>> show("a"); show("b")
    a
    b
    """
    print(name)
''', doctest_targets=("show",))
    assert result.passed, (result.status, result.detail, result.functions)
