"""A client that does not declare `workspace.applyEdit` still gets a passing run's result: when it does not
apply the edit (it answers that it does not know the request, refuses, or says nothing), the new code is in
the message, the log and the run's last status, and the history says it was not applied. One that applies
the edit anyway without a word, as Vim's ALE does, gets it applied as before."""

from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pytest_lsp import client_capabilities

from tests.lsp.conftest import clean_editor
from tests.lsp.editor import Editor, Servers
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_STUB
from tests.lsp.test_edit_conflicts import generate_add, like_ale
from tests.lsp.test_hover import DEF_LINE, hover_items


def without_apply_edit() -> types.ClientCapabilities:
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.workspace is not None
    capabilities.workspace.apply_edit = False
    return capabilities


@pytest_asyncio.fixture(loop_scope="module")
async def cannot_apply(servers: Servers, fake: ScriptedModel, request: pytest.FixtureRequest):
    async for editor in clean_editor(servers, request, "no-apply-edit", without_apply_edit()):
        yield editor


async def test_a_client_that_cannot_apply_edits_gets_the_code_and_history_says_not_applied(
        cannot_apply: Editor, fake: ScriptedModel):
    editor = cannot_apply

    async def unknown_request(params: types.ApplyWorkspaceEditParams) -> None:
        raise JsonRpcMethodNotFound(message="Method Not Found: workspace/applyEdit")

    uri, result = await generate_add(editor, fake, unknown_request)

    assert result["status"] == "refused", result
    assert editor.text(uri) == ADD_STUB, "nothing changed: the editor could not"
    function = '''def add(a, b):
    """Add two numbers.

    >>> add(1, 2)
    3
    >>> add(-1, 1)
    0
    """
    return a + b
'''
    assert editor.statuses[-1]["code"] == function, "the run's last status carries the code"
    [shown] = [m for m in editor.messages() if "cannot apply edits" in m]
    assert shown.endswith(f"to put in place of `add` (also in the server's log):\n{function}"), shown
    assert any(function in line for line in editor.logs()), "copyable from the log"

    [item] = hover_items(await editor.hover(uri, DEF_LINE, 5))
    assert "passed, not applied (attempt 1, generate)" in item, item
    assert item.split("\n")[1] == "the editor cannot apply edits; the new code was shown in a message"


async def test_a_client_that_applies_edits_it_did_not_declare_gets_them_applied(
        cannot_apply: Editor, fake: ScriptedModel):
    """As Vim's ALE does: it declares that it cannot apply edits, then applies them without an answer."""
    uri, result = await generate_add(cannot_apply, fake, like_ale(cannot_apply))

    assert result["status"] == "passed", result
    assert "    return a + b\n" in cannot_apply.text(uri)
    assert "code" not in cannot_apply.statuses[-1]
    assert not [m for m in cannot_apply.messages() if "cannot apply edits" in m]
