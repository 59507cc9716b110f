"""Hover on a function's name shows its attempt history, newest first; nothing without history."""

from __future__ import annotations

from lsprotocol import types

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.editor import Editor
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, ADD_WRONG
from tests.lsp.test_cancel import STUB_LINE
from tests.lsp.test_code_actions import line_of

DEF_LINE = line_of(ADD_STUB, "def add")


async def test_hover_after_a_run_shows_the_attempts_newest_first(editor: Editor, fake: FakeOpenAI):
    uri = editor.open("mod.py", ADD_STUB)
    assert await editor.hover(uri, DEF_LINE, 5) is None, "no history yet"

    fake.queue(ADD_WRONG, ADD_RIGHT)
    [action] = await editor.code_actions(uri, STUB_LINE)
    assert (await editor.run(action.command))["status"] == "passed"

    hover = await editor.hover(uri, DEF_LINE, 5)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert "`add`" in text and "fake-coder" in text
    assert text.index("**passed**") < text.index("**failed**"), "newest first"
    assert "`Failed example: add(1, 2)`" in text, "the first line of the condensed error"
    assert "tokens" in text and " s" in text
    assert hover.range == types.Range(
        start=types.Position(line=DEF_LINE, character=4), end=types.Position(line=DEF_LINE, character=7)
    )


async def test_no_hover_away_from_a_function_name(editor: Editor, fake: FakeOpenAI):
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    await editor.run(action.command)
    assert await editor.hover(uri, DEF_LINE, 12) is None, "on a parameter"
    assert await editor.hover(uri, line_of(editor.text(uri), "return a + b"), 8) is None
