"""A strict LSP 3.17 client with the least a client may declare: no code action literals, plain-text
hovers, no work-done progress, no `workspace/configuration`, plain `changes` in edits. The server
stays inside what it declared (pytest-lsp checks every message against the capabilities) and the
user still sees each run start and end."""

from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp.checks import LspSpecificationWarning

from tests.lsp.conftest import clean_editor
from tests.lsp.editor import Editor, Servers
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, ADD_WRONG
from tests.lsp.test_cancel import STUB_LINE
from tests.lsp.test_code_actions import line_of

MINIMAL = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(apply_edit=True),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        code_action=types.CodeActionClientCapabilities(),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText]),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
    ),
)


@pytest_asyncio.fixture(loop_scope="module")
async def strict(servers: Servers, fake: ScriptedModel, request: pytest.FixtureRequest):
    async for editor in clean_editor(servers, request, "strict", MINIMAL):
        yield editor


def no_spec_warnings(recwarn: pytest.WarningsRecorder) -> list[str]:
    return [str(w.message) for w in recwarn.list if issubclass(w.category, LspSpecificationWarning)]


async def test_actions_are_bare_commands(strict: Editor, recwarn: pytest.WarningsRecorder):
    uri = strict.open("mod.py", ADD_STUB)
    [command] = await strict.code_actions(uri, STUB_LINE)
    assert isinstance(command, types.Command), "no codeActionLiteralSupport: Commands only"
    assert command.title == "Generate & self-debug" and command.command == "pycapsule.generate"
    assert no_spec_warnings(recwarn) == []


async def test_a_run_without_progress_support_says_when_it_starts_and_ends(
    strict: Editor, fake: ScriptedModel, recwarn: pytest.WarningsRecorder
):
    fake.queue(ADD_WRONG, ADD_RIGHT)
    uri = strict.open("mod.py", ADD_STUB)
    [command] = await strict.code_actions(uri, STUB_LINE)

    result = await strict.run(command)

    assert result["status"] == "passed", result
    assert strict.client.progress_reports == {}, "no work-done progress was declared"
    shown = strict.messages()
    assert any(m.startswith("pycapsule: Generating `add`") for m in shown), shown
    assert any("`add` passes 2 examples (attempt 2)" in m for m in shown), shown
    assert "    return a + b\n" in strict.text(uri)
    [applied] = strict.applied
    assert applied.edit.document_changes is None and applied.edit.changes, "plain changes only"
    assert no_spec_warnings(recwarn) == []


async def test_hover_is_plain_text(strict: Editor, fake: ScriptedModel, recwarn: pytest.WarningsRecorder):
    fake.queue(ADD_WRONG, ADD_RIGHT)
    uri = strict.open("mod.py", ADD_STUB)
    [command] = await strict.code_actions(uri, STUB_LINE)
    assert (await strict.run(command))["status"] == "passed"

    hover = await strict.hover(uri, line_of(ADD_STUB, "def add"), 5)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.PlainText
    text = hover.contents.value
    assert "attempts at add" in text and "passed" in text and "failed" in text
    assert "**" not in text and "`" not in text
    assert no_spec_warnings(recwarn) == []
