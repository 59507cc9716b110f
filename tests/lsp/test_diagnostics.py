"""Doctest diagnostics on open and save: at the failing example's line, cleared when fixed, only
changed functions re-run, nothing for files without doctests or with syntax errors."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from tests.lsp.editor import Editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_STUB, BROKEN_DOUBLE, NO_DOCTESTS, SYNTAX_ERROR
from tests.lsp.test_code_actions import line_of

TWO_FUNCTIONS = (
    BROKEN_DOUBLE
    + '''

def triple(x):
    """Three times x.

    >>> triple(2)
    6
    """
    return x * 3
'''
)


async def test_a_failing_doctest_is_reported_at_its_example_and_cleared_when_fixed(editor: Editor):
    uri = editor.open("mod.py", BROKEN_DOUBLE)

    [diagnostic] = await editor.diagnostics_for(uri, bool)

    assert diagnostic.message == "doctest failed: expected 4, got 6"
    assert diagnostic.range.start.line == line_of(BROKEN_DOUBLE, ">>> double(2)")
    assert diagnostic.range.start.character == 4, "the example's text, not its indentation"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.source == "pycapsule"

    editor.replace(uri, "return x * 3", "return x * 2")
    editor.save(uri)
    assert await editor.diagnostics_for(uri, lambda found: not found) == []


async def test_an_exception_is_reported_in_one_line(editor: Editor):
    uri = editor.open("mod.py", BROKEN_DOUBLE.replace("return x * 3", "return x / 0"))
    [first, *_] = await editor.diagnostics_for(uri, bool)
    assert first.message == "doctest failed: ZeroDivisionError: division by zero"
    assert first.related_information and first.related_information[0].location.range.start.line == line_of(
        BROKEN_DOUBLE, "return x * 3"
    )


async def test_only_changed_functions_run_again(editor: Editor):
    uri = editor.open("two.py", TWO_FUNCTIONS)
    await editor.diagnostics_for(uri, bool)
    editor.replace(uri, "return x * 3\n\n\ndef triple", "return 3 * x\n\n\ndef triple")
    editor.save(uri)

    _, second = await editor.wait_for_log(lambda line: "doctests of two.py" in line, count=2)
    assert "ran 1 function, 1 cached" in second


async def test_files_without_doctests_or_with_syntax_errors_run_nothing(editor: Editor):
    plain = editor.open("plain.py", NO_DOCTESTS)
    broken = editor.open("broken.py", SYNTAX_ERROR)
    stub = editor.open("stub.py", ADD_STUB)
    failing = editor.open("mod.py", BROKEN_DOUBLE)
    await editor.diagnostics_for(failing, bool)

    assert not editor.client.diagnostics.get(plain)
    assert not editor.client.diagnostics.get(broken)
    assert not editor.client.diagnostics.get(stub), "a stub's doctests are not run: it has no body yet"
    ran = [m for m in editor.logs() if "doctests of" in m]
    assert all("mod.py" in m or "stub.py" in m for m in ran), ran

    editor.replace(broken, "return (a +\n", "return a + b + 1\n")
    editor.save(broken)
    [fixed_syntax] = await editor.diagnostics_for(broken, bool)
    assert fixed_syntax.message == "doctest failed: expected 3, got 4"


SLOW = '''import time


def slow(x):
    """
    >>> slow(2)
    2
    """
    time.sleep(60)
    return x
'''


async def test_a_save_during_a_check_stops_it_and_checks_what_was_saved(editor: Editor):
    uri = editor.open("slow.py", SLOW)
    await asyncio.sleep(1)  # past the debounce: the check of the slow version is under way
    editor.replace(uri, "    time.sleep(60)\n    return x", "    return x + 1")
    editor.save(uri)

    [diagnostic] = await editor.diagnostics_for(uri, bool)
    assert diagnostic.message == "doctest failed: expected 2, got 3"
    [stopped] = await editor.wait_for_log(lambda line: "doctests of slow.py: stopped" in line)
    assert "nothing published" in stopped


STUB_ABOVE_A_FAILING_FUNCTION = ADD_STUB.replace("return x * 2", "return x * 3")
ADD_IN_THREE_LINES = (
    '```python\ndef add(a, b):\n    """Add two numbers."""\n'
    "    total = a\n    total += b\n    return total\n```"
)


async def test_diagnostics_move_with_pycapsules_own_edit(editor: Editor, fake: ScriptedModel):
    """Published again at their new lines right after the edit, without running the doctests again."""
    fake.queue(ADD_IN_THREE_LINES)
    uri = editor.open("mod.py", STUB_ABOVE_A_FAILING_FUNCTION)
    [before] = await editor.diagnostics_for(uri, bool)
    assert before.range.start.line == line_of(STUB_ABOVE_A_FAILING_FUNCTION, ">>> double(2)")
    [action] = await editor.code_actions(uri, line_of(STUB_ABOVE_A_FAILING_FUNCTION, "    ...\n"))

    assert (await editor.run(action.command))["status"] == "passed"

    text = editor.text(uri)
    assert "    total += b\n" in text
    new_line = line_of(text, ">>> double(2)")
    assert new_line == before.range.start.line + 2
    [after] = await editor.diagnostics_for(
        uri, lambda found: bool(found) and found[0].range.start.line == new_line, timeout=10)
    assert after.message == before.message == "doctest failed: expected 4, got 6"
    assert after.range.start.character == before.range.start.character
    assert len([line for line in editor.logs() if "doctests of mod.py" in line]) == 1, "nothing ran again"
