"""The quick-fix on a failing doctest runs the loop in fix mode, from the current body. It is offered for
our diagnostics the client sends back, and from the server's own knowledge of which functions failed at the
last check wherever the client sends none (Neovim keeps a diagnostic's old line after an edit above it; eglot
sends none at the end of a line)."""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.editor import Editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import BROKEN_DOUBLE, DOUBLE_RIGHT
from tests.lsp.test_code_actions import line_of
from tests.lsp.test_diagnostics import TWO_FUNCTIONS


def fixes(actions: list | None) -> list:
    return [a for a in actions or [] if a.title.startswith("Self-debug")]


async def test_self_debug_quick_fix_fixes_the_function(editor: Editor, fake: ScriptedModel):
    fake.queue(DOUBLE_RIGHT)
    uri = editor.open("mod.py", BROKEN_DOUBLE)
    diagnostics = await editor.diagnostics_for(uri, bool)

    actions = await editor.code_actions(uri, diagnostics[0].range.start.line, diagnostics)
    [fix] = [a for a in actions or [] if a.title.startswith("Self-debug")]
    assert fix.title == "Self-debug `double` (doctests failing)"
    assert fix.kind == "quickfix" and list(fix.diagnostics or []) == diagnostics
    assert fake.requests == []

    result = await editor.run(fix.command)

    assert result["status"] == "passed", result
    assert "return x * 2" in editor.text(uri) and "x * 3" not in editor.text(uri)
    [request] = fake.chat_requests
    assert "x * 3" in request.prompt_text, "fix mode starts from the current body"
    editor.save(uri)
    assert await editor.diagnostics_for(uri, lambda found: not found) == []


async def test_no_quick_fix_before_the_server_knows_the_function_fails(editor: Editor):
    uri = editor.open("mod.py", BROKEN_DOUBLE)
    actions = await editor.code_actions(uri, 1)
    assert not fixes(actions)


async def test_the_quick_fix_is_offered_without_the_diagnostic_after_an_edit_above(each_editor: Editor):
    editor = each_editor
    uri = editor.open("two.py", TWO_FUNCTIONS)
    [diagnostic] = await editor.diagnostics_for(uri, bool)
    assert diagnostic.range.start.line == line_of(TWO_FUNCTIONS, ">>> double(2)")

    editor.replace(uri, "def double", "import math\n\n\ndef double")  # three lines above it, not saved
    text = editor.text(uri)
    for needle in ("    return x * 3", ">>> double(2)"):  # the body, and the failing example's own line
        [fix] = fixes(await editor.code_actions(uri, line_of(text, needle)))  # no diagnostic in the context
        assert fix.title == "Self-debug `double` (doctests failing)", needle
        assert fix.kind == "quickfix" and fix.command.command == "pycapsule.selfDebug"
        assert fix.command.arguments[0]["qualname"] == "double"
        [moved] = fix.diagnostics
        assert moved.range.start.line == line_of(text, ">>> double(2)"), "where the example is now"
        assert moved.message == diagnostic.message
    assert not fixes(await editor.code_actions(uri, line_of(text, "return x * 3\n\n\ndef triple") + 4)), (
        "triple passes its doctests")

    editor.replace(uri, "return x * 3\n\n\ndef triple", "return x * 2\n\n\ndef triple")
    assert not fixes(await editor.code_actions(uri, line_of(text, "    return x * 3"))), (
        "once the function itself changed, the last check says nothing about it")


READS_A_FILE = '''def total(path):
    """Sum the numbers in a file, one per line.

    >>> total("data/numbers.txt")
    6
    """
    with open(path) as handle:
        return sum(int(line) for line in handle)
'''


async def test_a_doctest_that_needs_a_file_the_sandbox_lacks_says_so_and_offers_no_quick_fix(editor: Editor):
    uri = editor.open("numbers.py", READS_A_FILE)
    [diagnostic] = await editor.diagnostics_for(uri, bool)

    assert diagnostic.message == (
        "doctest cannot run in the sandbox: it needs 'data/numbers.txt', which is not there")
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    assert diagnostic.code == "doctest-cannot-run"
    actions = await editor.code_actions(uri, diagnostic.range.start.line, [diagnostic])
    assert not [a for a in actions or [] if a.title.startswith("Self-debug")]

    editor.replace(uri, "open(path)", 'open("numbers.txt")')  # a path the docstring does not name
    editor.save(uri)
    [diagnostic] = await editor.diagnostics_for(uri, lambda found: found and "failed" in found[0].message)
    assert diagnostic.message.startswith("doctest failed: FileNotFoundError")
    actions = await editor.code_actions(uri, diagnostic.range.start.line, [diagnostic])
    assert [a for a in actions or [] if a.title.startswith("Self-debug")]
