"""Nothing the user typed is ever lost: typing elsewhere during a run is kept and the edit moves
with it; changing the function itself makes the server refuse the edit and say so. Editors that
answer an edit with an error, or not at all, neither lose the result nor hang the run. A result that
was not applied is never "passed" in the hover history: it says it was not applied, and why."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError

from tests.fakes.openai_server import Delay, Text
from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import Editor, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB
from tests.lsp.test_cancel import STUB_LINE, started
from tests.lsp.test_hover import ADD_VERIFIED, DEF_LINE, hover_items

EditHandler = Callable[[types.ApplyWorkspaceEditParams], Awaitable[Any]]


async def start_slow_run(editor: Editor, fake: ScriptedModel) -> tuple[str, asyncio.Task]:
    fake.queue(Delay(1.0, Text(ADD_RIGHT)))
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    run = asyncio.create_task(editor.run(action.command))
    await started(editor, fake)
    return uri, run


async def test_typing_elsewhere_during_the_run_is_kept(editor: Editor, fake: ScriptedModel):
    uri, run = await start_slow_run(editor, fake)
    editor.replace(uri, "import math\n", "import math\nimport os\n")
    editor.replace(uri, "return x * 2", "return x + x")

    result = await asyncio.wait_for(run, 60)

    assert result["status"] == "passed", result
    text = editor.text(uri)
    assert "import os\n" in text and "return x + x" in text
    assert "    return a + b\n" in text
    [applied] = editor.applied
    assert applied.edit.document_changes[0].text_document.version == 3, "the version it was rebased onto"


async def test_changing_the_function_during_the_run_refuses_the_edit(editor: Editor, fake: ScriptedModel):
    uri, run = await start_slow_run(editor, fake)
    editor.replace(uri, "    ...\n", "    return a - b  # my own attempt\n")
    typed = editor.text(uri)

    result = await asyncio.wait_for(run, 60)

    assert result["status"] == "refused", result
    assert editor.text(uri) == typed and editor.applied == []
    assert any("untouched" in m and "`add`" in m for m in editor.messages())


async def test_a_result_refused_because_the_function_changed_is_not_applied_on_hover(
        editor: Editor, fake: ScriptedModel):
    uri, run = await start_slow_run(editor, fake)
    editor.replace(uri, "    ...\n", "    return a - b  # my own attempt\n")
    assert (await asyncio.wait_for(run, 60))["status"] == "refused"

    [result] = hover_items(await editor.hover(uri, DEF_LINE, 5))

    assert "passed, not applied (attempt 1, generate)" in result, result
    why, verified = result.split("\n")[1:]
    assert why == "the function (lines 4-12) changed while the run was going on"
    assert ADD_VERIFIED.fullmatch(verified), verified
    assert "passed (attempt" not in result


async def test_a_result_the_editor_refuses_is_not_applied_on_hover_with_the_editors_reason(
        editor: Editor, fake: ScriptedModel):
    """An editor that cannot apply edits says so (its words are the editor's: text, never a link)."""
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    reason = "read-only [buffer](command:workbench.action.quit)"

    async def cannot(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason=reason)

    editor.on_edit = cannot
    [action] = await editor.code_actions(uri, STUB_LINE)
    assert (await editor.run(action.command))["status"] == "refused"

    hover = await editor.hover(uri, DEF_LINE, 5)
    [result] = hover_items(hover)
    why, verified = result.split("\n")[1:]
    assert why == reason and ADD_VERIFIED.fullmatch(verified), result
    assert "passed, not applied (attempt 1, generate)" in result, result
    assert "](command:" not in hover.contents.value, "escaped, not a link"


async def test_typing_while_the_edit_is_in_flight_is_kept(editor: Editor, fake: ScriptedModel):
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    typed_once: list[bool] = []

    def type_first() -> None:
        if not typed_once:
            typed_once.append(True)
            editor.replace(uri, "import math\n", "import math  # typed just now\n")

    editor.before_apply = type_first
    [action] = await editor.code_actions(uri, STUB_LINE)
    result = await editor.run(action.command)

    assert result["status"] == "passed", result
    assert len(editor.applied) == 2, "the stale edit was refused, the rebased one applied"
    text = editor.text(uri)
    assert "import math  # typed just now\n" in text and "    return a + b\n" in text


async def test_an_edit_refused_with_an_error_is_rebased_once_the_editor_reports_its_text(
    editor: Editor, fake: ScriptedModel
):
    """eglot answers a stale version with an error, and reports the user's typing only after a pause."""
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    refused: list[int] = []

    async def like_eglot(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if refused:
            return editor.apply_edit(params)
        refused.append(1)
        # The user typed; the editor tells the server only after it has answered the edit.
        asyncio.get_running_loop().call_soon(editor.replace, uri, "import math\n", "import math  # typed\n")
        raise JsonRpcInternalError(message="Edits on `mod.py' require version 2, you have 1")

    editor.on_edit = like_eglot
    [action] = await editor.code_actions(uri, STUB_LINE)
    result = await editor.run(action.command)

    assert result["status"] == "passed", result
    assert len(editor.applied) == 1 and refused == [1]
    text = editor.text(uri)
    assert "import math  # typed\n" in text and "    return a + b\n" in text


class TypingLikeEglot:
    """A user who types on through the end of a run, in an editor that reports typing late, as eglot does: its
    buffer is always one keystroke ahead of the text the server knows (a keystroke every 0.3 s is reported
    with the next one, the last after 0.5 s of quiet), and it refuses an edit made for an older version with
    an error. Typing starts when the result arrives and goes on for `seconds`; `line` is where it types;
    `then` is typed last (reported on its own, before the rest)."""

    def __init__(
        self, editor: Editor, uri: str, line: str, seconds: float, then: tuple[str, str] | None = None
    ) -> None:
        self.editor, self.uri, self.line, self.seconds, self.then = editor, uri, line, seconds, then
        self.typed = ""
        self.reported = line
        self.refused: list[int] = []
        self.typing: asyncio.Task | None = None

    def keystroke(self) -> None:
        self.typed += "x"

    def report(self) -> None:
        now = f"{self.line}  # {self.typed}" if self.typed else self.line
        if now != self.reported:
            self.editor.replace(self.uri, self.reported + "\n", now + "\n")
            self.reported = now

    @property
    def ahead(self) -> bool:
        return f"{self.line}  # {self.typed}" != self.reported

    async def type_on(self) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + self.seconds
        while loop.time() < end:
            await asyncio.sleep(0.3)
            self.report()
            self.keystroke()
        await asyncio.sleep(0.5)
        if self.then is not None:
            self.editor.replace(self.uri, *self.then)
        self.report()

    async def on_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if self.typing is None:
            self.keystroke()  # the user is typing as the result arrives
            self.typing = asyncio.create_task(self.type_on())
        if self.ahead:
            [change] = params.edit.document_changes
            sent = change.text_document.version
            self.refused.append(sent)
            raise JsonRpcInternalError(
                message=f"Edits on `mod.py' require version {sent}, you have {sent + 1}")
        return self.editor.apply_edit(params)


async def test_a_result_follows_the_text_while_the_user_types_on_elsewhere(
        editor: Editor, fake: ScriptedModel):
    """Longer than the 2 s the server once waited for newer text, and more than the 3 times it once offered
    the edit: it is offered again on each newer text until the editor takes it."""
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    user = TypingLikeEglot(editor, uri, "import math", seconds=3.5)
    editor.on_edit = user.on_edit
    [action] = await editor.code_actions(uri, STUB_LINE)

    result = await editor.run(action.command, timeout=60)

    assert result["status"] == "passed", result
    assert len(user.refused) > 3 and user.refused == sorted(user.refused), "each on a newer version"
    assert len(user.typed) >= 10
    text = editor.text(uri)
    assert text.startswith(f"import math  # {user.typed}\n"), "all the typing is kept"
    assert "    return a + b\n" in text
    assert editor.applied[-1].edit.document_changes[0].text_document.version == editor.versions[uri] - 1, (
        "the edit that was applied was made for the newest text")


async def test_a_result_followed_through_typing_is_refused_once_the_function_itself_changes(
        editor: Editor, fake: ScriptedModel):
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    mine = ("    ...\n", "    ...  # my own attempt\n")
    user = TypingLikeEglot(editor, uri, "import math", seconds=3, then=mine)
    editor.on_edit = user.on_edit
    [action] = await editor.code_actions(uri, STUB_LINE)

    result = await editor.run(action.command, timeout=60)

    assert result["status"] == "refused", result
    assert "the function (lines 4-12) changed while the run was going on" in result["message"], result
    assert "Your text is untouched" in result["message"]
    assert len(user.refused) > 3
    await user.typing
    typed = ADD_STUB.replace(*mine).replace("import math\n", f"import math  # {user.typed}\n")
    assert editor.text(uri) == typed, "everything the user typed, nothing else"


async def test_an_edit_the_editor_answers_as_applied_but_drops_is_offered_again(
        editor: Editor, fake: ScriptedModel):
    """Neovim 0.11 answers `applied: true` to an edit made for an older version than its buffer's, applying
    nothing ("Buffer ... newer than edits."), when the user's last keystroke is not reported yet; it reports
    that keystroke after its answer, without the edit. The result must not be lost for it."""
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    dropped: list[int | None] = []

    async def like_neovim(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if dropped:
            return editor.apply_edit(params)
        dropped.append(params.edit.document_changes[0].text_document.version)
        # the keystroke typed before the edit arrived goes out after the answer (Neovim's debounce)
        asyncio.get_running_loop().call_later(0.1, editor.replace, uri, "import math\n", "import math  # x\n")
        return types.ApplyWorkspaceEditResult(applied=True)

    editor.on_edit = like_neovim
    [action] = await editor.code_actions(uri, STUB_LINE)
    result = await editor.run(action.command)

    assert result["status"] == "passed", result
    assert dropped == [1] and len(editor.applied) == 1, "offered again, on the text with the keystroke"
    text = editor.text(uri)
    assert "import math  # x\n" in text and "    return a + b\n" in text, text


async def generate_add(editor: Editor, fake: ScriptedModel, on_edit: EditHandler) -> tuple[str, dict]:
    """Generate `add` in an editor that answers edits with `on_edit`: the document and how the run ended."""
    fake.queue(ADD_RIGHT)
    uri = editor.open("mod.py", ADD_STUB)
    editor.on_edit = on_edit
    [action] = await editor.code_actions(uri, STUB_LINE)
    return uri, await editor.run(action.command, timeout=30)


def like_ale(editor: Editor) -> EditHandler:
    """Applies the edit and never answers: its didChange is the answer."""

    async def apply_silently(params: types.ApplyWorkspaceEditParams) -> None:
        editor.apply_edit(params)
        await editor.never_answer()

    return apply_silently


async def test_an_edit_applied_without_an_answer_counts_as_applied(editor: Editor, fake: ScriptedModel):
    uri, result = await generate_add(editor, fake, like_ale(editor))

    assert result["status"] == "passed", result
    assert "    return a + b\n" in editor.text(uri)


async def test_an_edit_answered_after_its_text_arrived_ends_without_an_error(
        fake: ScriptedModel, project: Path, tmp_path: Path):
    """Neovim may send the edit's didChange before its answer to workspace/applyEdit: the success is a
    success, and the late answer raises no error in the server (it showed "Error in server: CANCELLED").
    A server of its own: a shared one may still get late answers of other tests' editors."""
    fake.queue(ADD_RIGHT)
    editor = await start_editor("neovim", project, server_env(fake.base_url, tmp_path), TEST_OPTIONS)
    answered = asyncio.Event()

    async def text_first(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        result = editor.apply_edit(params)
        await asyncio.sleep(0.5)
        answered.set()
        return result

    editor.on_edit = text_first
    try:
        uri = editor.open("mod.py", ADD_STUB)
        [action] = await editor.code_actions(uri, STUB_LINE)
        result = await editor.run(action.command, timeout=30)
        await asyncio.wait_for(answered.wait(), 10)
        await asyncio.sleep(0.5)  # the late answer has reached the server

        assert result["status"] == "passed", result
        assert not [m for m in editor.client.messages if m.type == types.MessageType.Error], editor.messages()
        assert not any("Error" in m or "Traceback" in m for m in editor.logs()), editor.logs()
    finally:
        await stop_editor(editor)


async def test_an_edit_that_is_never_answered_ends_the_run_with_a_message(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    fake.queue(ADD_RIGHT, ADD_RIGHT)
    options = {"pycapsule": {**TEST_OPTIONS["pycapsule"], "applyEditTimeout": 1}}
    editor = await start_editor("neovim", project, server_env(fake.base_url, tmp_path), options)

    async def silent(params: types.ApplyWorkspaceEditParams) -> None:
        await editor.never_answer()

    editor.on_edit = silent
    try:
        uri = editor.open("mod.py", ADD_STUB)
        [action] = await editor.code_actions(uri, STUB_LINE)
        result = await editor.run(action.command, timeout=30)

        assert result["status"] == "unconfirmed", result
        assert "did not answer the edit within 1 s" in result["message"]
        assert any("did not answer the edit" in m for m in editor.messages())
        assert editor.statuses[-1]["state"] == "idle"
        [unconfirmed] = hover_items(await editor.hover(uri, DEF_LINE, 5))
        assert "passed, unconfirmed (attempt 1, generate)" in unconfirmed, unconfirmed
        assert unconfirmed.split("\n")[1] == "the editor did not answer the edit within 1 s"
        again = await editor.execute(action.command)
        assert again["status"] == "started", "the function is free again, not busy"
        assert (await editor.run_end(again["runId"], 30))["status"] == "unconfirmed"
    finally:
        await stop_editor(editor)
