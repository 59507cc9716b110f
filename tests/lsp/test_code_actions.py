"""The "Generate & self-debug" action: offered on stubs only, cheap to list, a command reference;
kind filters as editors send them; a syntax error elsewhere in the file changes nothing."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.lsp.editor import Editor, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_STUB, BROKEN_DOUBLE, SYNTAX_ERROR


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")


async def test_offered_on_a_stub_with_the_cursor_in_its_body(editor: Editor, fake: ScriptedModel):
    uri = editor.open("mod.py", ADD_STUB)
    actions = await editor.code_actions(uri, line_of(ADD_STUB, "    ...\n"))
    assert actions is not None
    [action] = actions
    assert action.title == "Generate & self-debug"
    assert action.kind == types.CodeActionKind.RefactorRewrite
    assert action.edit is None, "listing must not compute the edit"
    assert action.command is not None and action.command.command == "pycapsule.generate"
    assert list(action.command.arguments or []) == [{"uri": uri, "qualname": "add", "version": 1}]
    assert fake.requests == [], "listing actions must not call the model"


async def test_offered_on_the_def_line_and_docstring_too(editor: Editor):
    uri = editor.open("mod.py", ADD_STUB)
    for needle in ("def add", ">>> add(1, 2)"):
        actions = await editor.code_actions(uri, line_of(ADD_STUB, needle))
        assert actions and actions[0].title == "Generate & self-debug", needle


async def test_not_offered_on_an_implemented_function_or_outside_functions(editor: Editor):
    uri = editor.open("mod.py", ADD_STUB)
    assert not await editor.code_actions(uri, line_of(ADD_STUB, "return x * 2"))
    assert not await editor.code_actions(uri, line_of(ADD_STUB, "import math"))


async def test_a_file_with_a_syntax_error_gets_no_actions_and_no_crash(editor: Editor):
    uri = editor.open("broken.py", SYNTAX_ERROR)
    assert not await editor.code_actions(uri, 1)
    ok = editor.open("mod.py", ADD_STUB)
    assert await editor.code_actions(ok, line_of(ADD_STUB, "    ...\n")), "the server still answers"


async def test_tagged_llm_generated_where_the_client_supports_the_tag(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.text_document and capabilities.text_document.code_action
    capabilities.text_document.code_action.tag_support = types.CodeActionTagOptions(
        value_set=[types.CodeActionTag.LlmGenerated]
    )
    editor = await start_editor(
        "visual-studio-code", project, server_env(fake.base_url, tmp_path), capabilities=capabilities
    )
    try:
        uri = editor.open("mod.py", ADD_STUB)
        [action] = await editor.code_actions(uri, line_of(ADD_STUB, "    ...\n"))
        assert list(action.tags or []) == [types.CodeActionTag.LlmGenerated]
    finally:
        await stop_editor(editor)


async def test_untagged_where_the_client_does_not_list_the_tag(editor: Editor):
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, line_of(ADD_STUB, "    ...\n"))
    assert action.tags is None


async def test_kind_filters_keep_the_matching_actions(editor: Editor):
    """eglot's `eglot-code-action-rewrite` and Neovim's `only` send `context.only`."""
    uri = editor.open("mod.py", ADD_STUB)
    stub = line_of(ADD_STUB, "    ...\n")
    for only in (["refactor.rewrite"], ["refactor"], ["quickfix", "refactor"]):
        actions = await editor.code_actions(uri, stub, only=only)
        assert actions and actions[0].title == "Generate & self-debug", only
    assert await editor.code_actions(uri, stub, only=["source"]) is None
    assert await editor.code_actions(uri, stub, only=["quickfix"]) is None

    broken = editor.open("broken.py", BROKEN_DOUBLE)
    diagnostics = await editor.diagnostics_for(broken, bool)
    [fix] = await editor.code_actions(broken, diagnostics[0].range.start.line, diagnostics, only=["quickfix"])
    assert fix.title.startswith("Self-debug")


async def test_quick_fix_for_a_diagnostic_sent_back_without_its_source(editor: Editor):
    """ALE sends back only range, code and message."""
    uri = editor.open("mod.py", BROKEN_DOUBLE)
    [published, *_] = await editor.diagnostics_for(uri, bool)
    bare = types.Diagnostic(range=published.range, message=published.message, code=published.code)

    actions = await editor.code_actions(uri, bare.range.start.line, [bare])

    [fix] = [a for a in actions or [] if a.title.startswith("Self-debug")]
    assert fix.title == "Self-debug `double` (doctests failing)"
    someone_else = types.Diagnostic(range=published.range, message="E501", code="E501", source="flake8")
    [own] = await editor.code_actions(uri, bare.range.start.line, [someone_else])
    assert own.title == fix.title
    assert [(d.source, d.message) for d in own.diagnostics] == [("pycapsule", published.message)], (
        "offered for what the server knows of the function, never for another tool's diagnostic")


BROKEN_ELSEWHERE = ADD_STUB + "\n\ndef half(x):\n    return (x /\n"


async def test_a_syntax_error_elsewhere_offers_the_same_actions_and_the_run_ends_saying_why(editor: Editor):
    uri = editor.open("mod.py", BROKEN_ELSEWHERE)
    stub = line_of(BROKEN_ELSEWHERE, "    ...\n")
    [action] = await editor.code_actions(uri, stub)
    assert action.title == "Generate & self-debug"

    answer = await editor.execute(action.command)  # answered from the function's own definition
    assert answer["status"] == "started", answer
    end = await editor.run_end(answer["runId"], 30)  # the engine's process parses the whole module

    assert end["status"] == "error" and "did not start: the file does not parse" in end["message"], end
    assert "\n" not in end["message"], "one sentence"
    assert any("does not parse" in m for m in editor.messages())
    [again] = await editor.code_actions(uri, stub)
    assert again.title == "Generate & self-debug", "the same answer whatever was parsed before"
    assert editor.text(uri) == BROKEN_ELSEWHERE
