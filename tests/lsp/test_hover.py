"""Hover on a function's name shows its attempt history, newest first; nothing without history;
an unsaved buffer's history is its own. A run's result says what verified it and, when its edit was not
applied, that it was not and why. What the history holds (a model's name, the sandbox's error text, test
file names, an editor's refusal) is untrusted: hover shows it verbatim and it never becomes a link, there or
in a message."""

from __future__ import annotations

import html
import re
from pathlib import Path

from lsprotocol import types
from markdown_it import MarkdownIt
from pycapsule.history import AttemptRecord, application
from pycapsule.lsp.features.hover import render

from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import Editor, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, ADD_WRONG
from tests.lsp.test_cancel import STUB_LINE
from tests.lsp.test_code_actions import line_of

DEF_LINE = line_of(ADD_STUB, "def add")
HOSTILE_MODEL = "m` [run](command:workbench.action.terminal.new) ``<img src=x>`"
HOSTILE_STUB = '''def echo(text):
    """
    >>> echo("`` [open](command:workbench.action.terminal.new) `")
    'no'
    """
    ...
'''
HOSTILE_ANSWER = (
    "```python\ndef echo(text):\n"
    "    raise ValueError('[open](command:workbench.action.quit) ` **x**')\n```"
)
ADD_VERIFIED = re.compile(r"verified by 2 examples; they catch \d+ of \d+ small changes")
"""What verified ADD_RIGHT, as the run's result says it: its examples, and how many of the body's small
changes they catch (pycapsule.strength; tests/lsp/test_strength.py has a body they do not pin down)."""
VSCODE_LINK = re.compile(r"\[([^\]]+)\]\(((?:https?://|command:|file:)[^)\s]+)(?: ([\"'])(.+?)(\3))?\)", re.I)
"""How VS Code finds links in a notification's text (src/vs/base/common/linkedText.ts)."""


def hover_items(hover: types.Hover | None) -> list[str]:
    """The history as a reader sees it: one text per attempt, newest first (the Markdown rendered, tags
    dropped, a line break as a new line)."""
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    page = MarkdownIt("commonmark").render(hover.contents.value)
    items = re.findall(r"<li>(.*?)</li>", page, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in items]


async def test_hover_after_a_run_shows_the_attempts_newest_first(editor: Editor, fake: ScriptedModel):
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
    passed, failed = hover_items(hover)
    assert ADD_VERIFIED.fullmatch(passed.split("\n")[-1]), passed
    assert "verified" not in failed, "told on the result only"
    assert hover.range == types.Range(
        start=types.Position(line=DEF_LINE, character=4), end=types.Position(line=DEF_LINE, character=7)
    )


async def test_no_hover_away_from_a_function_name(editor: Editor, fake: ScriptedModel):
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    await editor.run(action.command)
    assert await editor.hover(uri, DEF_LINE, 12) is None, "on a parameter"
    assert await editor.hover(uri, line_of(editor.text(uri), "return a + b"), 8) is None


async def test_unsaved_buffers_show_only_their_own_runs_of_this_session(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    env = server_env(fake.base_url, tmp_path)
    editor = await start_editor("visual-studio-code", project, env, TEST_OPTIONS)
    try:
        first = editor.open_untitled("Untitled-1", ADD_STUB)
        second = editor.open_untitled("Untitled-2", ADD_STUB)
        fake.queue(ADD_WRONG, ADD_RIGHT)
        [action] = await editor.code_actions(first, STUB_LINE)
        assert (await editor.run(action.command))["status"] == "passed"

        mine = await editor.hover(first, DEF_LINE, 5)
        assert mine is not None
        assert "**passed**" in mine.contents.value and "**failed**" in mine.contents.value
        assert ADD_VERIFIED.fullmatch(hover_items(mine)[0].split("\n")[-1])
        assert await editor.hover(second, DEF_LINE, 5) is None, "another buffer's runs"
    finally:
        await stop_editor(editor)

    restarted = await start_editor("visual-studio-code", project, env, TEST_OPTIONS)
    try:
        again = restarted.open_untitled("Untitled-1", ADD_STUB)
        assert await restarted.hover(again, DEF_LINE, 5) is None, "a run from an earlier server start"
    finally:
        await stop_editor(restarted)


async def test_untrusted_text_is_shown_verbatim_and_never_as_a_link(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    options = {**TEST_OPTIONS["pycapsule"], "model": HOSTILE_MODEL, "maxAttempts": 1}
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path), options)
    try:
        uri = editor.open("echo.py", HOSTILE_STUB)
        fake.queue(HOSTILE_ANSWER)
        [action] = await editor.code_actions(uri, line_of(HOSTILE_STUB, "..."))
        answer = await editor.run(action.command)
        assert answer["status"] == "gave_up"

        hover = await editor.hover(uri, 0, 5)
        assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
        page = MarkdownIt("commonmark").render(hover.contents.value)
        assert "<a " not in page and "<img" not in page and "<strong>x" not in page, page
        shown = re.findall(r"<code>(.*?)</code>", page)
        assert html.escape(HOSTILE_MODEL) in shown, "the model's name, verbatim"
        assert any("[open](command:workbench.action.terminal.new)" in html.unescape(code) for code in shown)

        progress = [r.message for reports in editor.client.progress_reports.values() for r in reports]
        said = [*editor.messages(), *progress, *(s["message"] for s in editor.statuses), answer["message"]]
        assert any("[open]" in text for text in said), "the failure is quoted"
        assert not [text for text in said if text and VSCODE_LINK.search(text)]
    finally:
        await stop_editor(editor)


def test_what_verified_a_result_and_why_it_was_not_applied_are_shown_as_text():
    """Both hold text from elsewhere: test file names from the project, a refusal's reason from the editor."""
    hostile = "[open](command:workbench.action.terminal.new) `x` **y** <img src=x>"
    record = AttemptRecord(
        path="/p/mod.py", qualname="add", run_id="r1", attempt=1, mode="generate", verdict="passed", code="",
        condensed="", model="m", prompt_tokens=1, completion_tokens=2, model_seconds=0.5, check_seconds=0.5,
        created=0.0, verified=f"verified by 1 example + 1 test (tests/{hostile}.py)",
        applied=application("not applied", f"the editor refused the edit: {hostile}"))

    page = MarkdownIt("commonmark").render(render("add", [record]))

    assert not [tag for tag in ("<a ", "<img", "<strong>y", "<code>x") if tag in page], page
    [item] = re.findall(r"<li>(.*?)</li>", page, re.S)
    assert html.unescape(re.sub(r"<[^>]+>", "", item)).split("\n")[1:] == [
        f"the editor refused the edit: {hostile}", f"verified by 1 example + 1 test (tests/{hostile}.py)"]
    assert "<strong>passed, not applied</strong>" in item
    plain = render("add", [record], markdown=False)
    assert "passed, not applied (attempt 1, generate)" in plain
    assert f"\n  the editor refused the edit: {hostile}\n" in plain
