"""Choosing "Generate & self-debug": the loop runs in the background with progress, then one
versioned edit replaces the body; budget exhausted and model down leave the document untouched."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from lsprotocol import types

from tests.fakes.openai_server import Delay, Text
from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import API_KEY, Editor, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, ADD_WRONG
from tests.lsp.test_code_actions import line_of


async def generate(editor: Editor, uri: str) -> dict:
    [action] = await editor.code_actions(uri, line_of(editor.text(uri), "    ...\n"))
    assert action.command is not None
    return await editor.run(action.command)


def progress_of(editor: Editor) -> list:
    [reports] = editor.client.progress_reports.values()
    return reports


def check_file(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pycapsule", "check", str(path)], capture_output=True, text=True, timeout=120
    )


async def test_success_applies_one_versioned_edit_that_passes_check(each_editor: Editor, fake: ScriptedModel):
    editor = each_editor
    fake.queue(ADD_WRONG, ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)

    result = await generate(editor, uri)

    assert result["status"] == "passed", result
    assert result["attempts"] == 2
    [applied] = editor.applied
    [change] = applied.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.version == 1, "computed against the version the run started from"
    text = editor.text(uri)
    assert "    return a + b\n" in text
    assert text.replace("    return a + b\n", "    ...\n") == ADD_STUB, "only the body changed"

    reports = progress_of(editor)
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].title == "Generating `add`" and reports[0].cancellable
    messages = [r.message for r in reports[1:-1]]
    assert "attempt 1/3: generating" in messages
    assert any(m.startswith("attempt 1/3: doctest failed") and "expected" in m for m in messages), messages
    assert "attempt 2/3: doctests passed" in messages
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and "passes" in reports[-1].message

    states = [s["state"] for s in editor.statuses if s["runId"]]  # not the one sent when settings load
    assert states[0] == "generating" and states[-1] == "idle"
    assert any(s.get("attempt") == 2 and s.get("maxAttempts") == 3 for s in editor.statuses)

    editor.save(uri)
    checked = check_file(editor.root / "mod.py")
    assert checked.returncode == 0, checked.stdout + checked.stderr


UNICODE_STUB = '''GREETING = "héllo 😋 wörld"


def shout(text):
    """Upper-case, with a mark: ünïcode columns count differently in UTF-8, UTF-16 and UTF-32.

    >>> shout("é😋")
    'É😋!'
    """
    ...
'''

SHOUT_RIGHT = '```python\ndef shout(text):\n    # ça marche 😋\n    return text.upper() + "!"\n```'


async def test_the_edit_lands_right_in_the_negotiated_position_encoding(
    each_editor: Editor, fake: ScriptedModel
):
    editor = each_editor  # VS Code counts UTF-16 code units, Neovim UTF-8 bytes
    fake.queue(SHOUT_RIGHT)
    uri = editor.open("shout.py", UNICODE_STUB)
    result = await generate(editor, uri)
    assert result["status"] == "passed", result
    assert editor.text(uri) == UNICODE_STUB.replace(
        "    ...\n", '    # ça marche 😋\n    return text.upper() + "!"\n'
    )


async def test_new_imports_come_in_the_same_edit(each_editor: Editor, fake: ScriptedModel):
    editor = each_editor
    stub = '''def mean(values):
    """The average.

    >>> mean([1, 2, 3])
    2
    """
    ...
'''
    fake.queue("```python\nimport statistics\n\n\ndef mean(values):\n    return statistics.mean(values)\n```")
    uri = editor.open("avg.py", stub)
    result = await generate(editor, uri)
    assert result["status"] == "passed", result
    [applied] = editor.applied
    assert len(applied.edit.document_changes) == 1, "one document edit: one undo step"
    text = editor.text(uri)
    assert text.startswith("import statistics\n") and "    return statistics.mean(values)\n" in text
    editor.save(uri)
    assert check_file(editor.root / "avg.py").returncode == 0


async def test_budget_exhausted_leaves_the_document_untouched(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    fake.queue(ADD_WRONG, ADD_WRONG)
    options = {"maxAttempts": 2, "modelRetries": 0}
    editor = await start_editor("neovim", project, server_env(fake.base_url, tmp_path), options)
    try:
        uri = editor.open("mod.py", ADD_STUB)
        result = await generate(editor, uri)
        assert result["status"] == "gave_up", result
        assert result["attempts"] == 2
        assert editor.applied == [] and editor.text(uri) == ADD_STUB
        end = progress_of(editor)[-1]
        assert isinstance(end, types.WorkDoneProgressEnd) and "gave up" in end.message
        assert any("gave up" in m for m in editor.messages())
        assert len(fake.chat_requests) == 2
    finally:
        await stop_editor(editor)


async def test_model_down_is_one_clear_error_and_the_server_keeps_working(project: Path, tmp_path: Path):
    dead = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
    editor = await start_editor(
        "visual-studio-code", project, server_env(dead, tmp_path), {"modelRetries": 0, "requestTimeout": 5}
    )
    try:
        uri = editor.open("mod.py", ADD_STUB)
        result = await generate(editor, uri)
        assert result["status"] == "error", result
        assert editor.text(uri) == ADD_STUB and editor.applied == []
        assert any(s["state"] == "error" for s in editor.statuses)
        [error] = [m for m in editor.client.messages if m.type == types.MessageType.Error]
        assert "\n" not in error.message and "Traceback" not in error.message
        assert await editor.code_actions(uri, line_of(ADD_STUB, "    ...\n")), "still answering"
    finally:
        await stop_editor(editor)


async def test_the_api_key_never_reaches_messages_or_logs(fake: ScriptedModel, project: Path, tmp_path: Path):
    """A server of its own: every message and log from its start on."""
    fake.queue(ADD_RIGHT)
    env = server_env(fake.base_url, tmp_path)
    editor = await start_editor("visual-studio-code", project, env, TEST_OPTIONS)
    try:
        uri = editor.open("mod.py", ADD_STUB)
        await generate(editor, uri)
        assert fake.chat_requests[0].headers["authorization"] == f"Bearer {API_KEY}"
        said = editor.messages() + editor.logs() + [str(s) for s in editor.statuses]
        assert said and not any(API_KEY in line for line in said)
    finally:
        await stop_editor(editor)


async def test_progress_and_status_show_each_phase_with_its_figures_within_a_second(
        editor: Editor, fake: ScriptedModel):
    fake.queue(Delay(1.5, Text(ADD_RIGHT, chunk_delay=0.1)))
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, line_of(editor.text(uri), "    ...\n"))
    assert action.command is not None
    answer = await editor.execute(action.command)
    await fake.asked()
    asked = time.monotonic()
    await editor.wait_for_status(lambda s: s["message"].startswith("reading the prompt"), timeout=1.0)
    await editor.wait_for_status(lambda s: s["message"] == "reading the prompt: 1 s", timeout=1.5)
    await editor.wait_for_status(lambda s: s["message"] == "writing: 1 token", timeout=10)
    assert 1.3 < time.monotonic() - asked < 2.5, "writing is said within a second of the first token"
    await editor.wait_for_status(lambda s: re.fullmatch(r"writing: \d+ tokens, \d+ tokens/s", s["message"]))
    assert (await editor.run_end(answer["runId"]))["status"] == "passed"
    messages = [r.message for r in progress_of(editor)][1:-1]
    phases = ["attempt 1/3: generating", "attempt 1/3: reading the prompt: 0 s",
              "attempt 1/3: writing: 1 token", "attempt 1/3: running 2 examples",
              "attempt 1/3: doctests passed"]
    assert [m for m in messages if m in phases] == phases, messages
    assert [s["message"] for s in editor.statuses if s["message"] == "running 2 examples"]


def assert_annotated(applied: types.ApplyWorkspaceEditParams, annotated: bool) -> None:
    [change] = applied.edit.document_changes
    edits = list(change.edits)
    if annotated:
        [(key, annotation)] = (applied.edit.change_annotations or {}).items()
        assert annotation.needs_confirmation and "`add`" in annotation.label
        assert all(isinstance(e, types.AnnotatedTextEdit) and e.annotation_id == key for e in edits)
    else:
        assert applied.edit.change_annotations is None
        assert not any(isinstance(e, types.AnnotatedTextEdit) for e in edits)


async def test_a_diff_preview_where_the_client_supports_change_annotations(
    each_editor: Editor, fake: ScriptedModel
):
    """VS Code shows its refactor preview for an edit whose annotation needs confirmation; Neovim does
    not support change annotations and gets a plain edit."""
    fake.queue(ADD_RIGHT)
    uri = each_editor.open("mod.py", ADD_STUB)
    assert (await generate(each_editor, uri))["status"] == "passed"
    [applied] = each_editor.applied
    assert_annotated(applied, annotated=each_editor.profile == "visual-studio-code")
    assert "    return a + b\n" in each_editor.text(uri)


async def test_the_diff_preview_can_be_turned_off(fake: ScriptedModel, project: Path, tmp_path: Path):
    fake.queue(ADD_RIGHT)
    options = {"pycapsule": {"modelRetries": 0, "diffPreview": False}}
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path), options)
    try:
        uri = editor.open("mod.py", ADD_STUB)
        assert (await generate(editor, uri))["status"] == "passed"
        [applied] = editor.applied
        assert_annotated(applied, annotated=False)
        assert "    return a + b\n" in editor.text(uri)
    finally:
        await stop_editor(editor)
