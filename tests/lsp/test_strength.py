"""A body whose examples pass but catch too few of its small changes (issue 65): with `minCaught` 0.8 the
run ends passed_loosely and its edit is applied; an Information diagnostic on the function names a change that
still passes; hover lists the counts and the suggested examples; "Add example ..." code actions write them
into the docstring. Any change to the function ends all three. Clients without `documentChanges`,
`codeAction/resolve` or a progress UI get the same, in the shape they read. With the default `minCaught` (0:
"passed" is never withheld) the run ends passed, with hover and the code actions but no diagnostic.

The counts and the surviving changes are the engine's (pycapsule.strength, tests/engine/test_strength.py):
read here from the run's end message, and expected the same in the diagnostic and on hover."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from markdown_it import MarkdownIt
from pycapsule.event_text import PINNING
from pytest_lsp import client_capabilities

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import TEST_OPTIONS, clean_editor, shared_servers
from tests.lsp.editor import Editor, Servers, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.test_code_actions import line_of
from tests.lsp.test_hover import hover_items

FEES = '''def late_fee(days):
    """Half a unit a day, capped at 10.0 after 20 days.

    >>> late_fee(3)
    1.5
    """
'''
CAPPED = "```python\ndef late_fee(days):\n    if days > 20:\n        return 10.0\n    return days * 0.5\n```"
"""Passes late_fee(3); nothing checks the cap: about half of its small changes survive."""
BODY = "    if days > 20:\n        return 10.0\n    return days * 0.5\n"
SUGGESTED = ">>> late_fee(30)\n10.0\n>>> late_fee(103)\n10.0\n"
ADDED = "    >>> late_fee(30)\n    10.0\n    >>> late_fee(103)\n    10.0\n"
WITH_THE_EXAMPLES = FEES.replace("    1.5\n", f"    1.5\n{ADDED}") + BODY
ADD_BOTH = "Add 2 suggested examples"
LOOSE_OPTIONS = {"pycapsule": {**TEST_OPTIONS["pycapsule"], "minCaught": 0.8}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def servers(endpoint: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    """This module's shared servers call a body passed only when its examples catch 80 % of its changes."""
    async for pool in shared_servers(endpoint, tmp_path_factory.mktemp("strength-server"), LOOSE_OPTIONS):
        yield pool
ADD_FIRST = "Add example `late_fee(30)` → 10.0"


@pytest_asyncio.fixture(loop_scope="module")
async def default_editor(fake: ScriptedModel, project: Path, tmp_path: Path) -> AsyncIterator[Editor]:
    """An editor of its own whose server has the default settings (`minCaught` 0) and its own history."""
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path),
                                TEST_OPTIONS)
    try:
        yield editor
    finally:
        await stop_editor(editor)


async def generate_fees(editor: Editor, fake: ScriptedModel, name: str = "fees.py") -> tuple[str, dict]:
    fake.queue(CAPPED)
    uri = editor.open(name, FEES)
    [action] = [a for a in await editor.code_actions(uri, 0) or [] if a.title == "Generate & self-debug"]
    return uri, await editor.run(action.command)


def counts(result: dict) -> str:
    """'they catch 14 of 26 small changes', as the run's end says it (fewer caught than run)."""
    caught, run = re.search(r"they catch (\d+) of (\d+) small changes", result["message"]).groups()
    assert 0 < int(caught) < int(run)
    return f"they catch {caught} of {run} small changes"


def first_survivor(result: dict) -> str:
    """The first change that still passes, as the run's end names it: '`if days > 20:` -> removed'."""
    return re.search(r"still passing: line 7: (.+?); line ", result["message"]).group(1)


def loose(diagnostics: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.code == "loosely-pinned"]


def example_actions(actions: list | None) -> dict[str, types.CodeAction]:
    return {a.title: a for a in actions or [] if a.title.startswith("Add ")}


async def test_a_loosely_pinned_result_is_applied_and_its_diagnostic_lasts_while_the_function_does(
        each_editor: Editor, fake: ScriptedModel):
    editor = each_editor
    uri, result = await generate_fees(editor, fake)

    assert result["status"] == "passed_loosely", result
    assert "code actions on `late_fee` add examples" in result["message"]
    assert editor.text(uri) == FEES + BODY, "the body is applied all the same"
    progress = [r.message for reports in editor.client.progress_reports.values() for r in reports]
    assert f"attempt 1/3: {PINNING}" in progress

    [diagnostic] = loose(await editor.diagnostics_for(uri, lambda found: bool(loose(found))))
    assert diagnostic.severity == types.DiagnosticSeverity.Information and diagnostic.source == "pycapsule"
    assert diagnostic.message == ("late_fee: its examples and tests do not pin the body down: "
                                  f"{counts(result)}; e.g. line 7: {first_survivor(result)} still passes")
    assert diagnostic.range == types.Range(start=types.Position(line=0, character=4),
                                           end=types.Position(line=0, character=12)), "on the function's name"
    actions = await editor.code_actions(uri, 0, [diagnostic])
    assert not [a for a in actions or [] if a.title.startswith("Self-debug")], "its doctests pass"

    editor.replace(uri, "def late_fee", "import math\n\n\ndef late_fee")  # three lines above it
    [moved] = loose(await editor.diagnostics_for(uri, lambda found: loose(found) != [diagnostic]))
    assert moved.range.start.line == 3
    assert moved.message.endswith(f"line 10: {first_survivor(result)} still passes"), "its line now"

    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return 10.0")))
    editor.replace(uri, "return days * 0.5", "return days / 2")  # the function itself
    assert not await editor.diagnostics_for(uri, lambda found: not loose(found))
    assert not example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return days / 2")))
    stale = await editor.client.code_action_resolve_async(listed[ADD_FIRST])  # picked from an old menu
    assert stale.edit is None and ">>>" not in editor.text(uri).split("1.5")[1]
    said = editor.messages()[-1]
    assert said == "pycapsule: `late_fee` changed since the examples were suggested: none was added."


async def test_hover_shows_the_counts_and_the_suggested_examples(editor: Editor, fake: ScriptedModel):
    uri, result = await generate_fees(editor, fake)
    assert result["status"] == "passed_loosely", result

    hover = await editor.hover(uri, 0, 6)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert f"```python\n{SUGGESTED}```" in text, text
    page = html.unescape(MarkdownIt("commonmark").render(text))
    assert f"{counts(result)}; still passing: line 7: {first_survivor(result)}; line " in page, "as text"
    [result_attempt] = hover_items(hover)
    assert result_attempt.endswith(f"\nloosely verified by 1 example; {counts(result)}")
    editor.replace(uri, "return days * 0.5", "return days / 2")
    changed = await editor.hover(uri, 0, 6)
    assert changed is not None and ">>> late_fee(30)" not in changed.contents.value, "the history alone"


async def test_add_example_writes_it_into_the_docstring_where_it_passes(editor: Editor, fake: ScriptedModel):
    uri, result = await generate_fees(editor, fake)
    assert result["status"] == "passed_loosely", result
    [diagnostic] = loose(await editor.diagnostics_for(uri, lambda found: bool(loose(found))))

    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return 10.0")))
    assert list(listed) == [ADD_FIRST, "Add example `late_fee(103)` → 10.0", ADD_BOTH]
    for action in listed.values():
        assert action.kind == types.CodeActionKind.RefactorRewrite and not action.is_preferred
        assert action.edit is None and action.command is None, "VS Code resolves the edit when it is picked"
    fixes = example_actions(await editor.code_actions(uri, 0, [diagnostic], only=["quickfix"]))
    assert list(fixes) == list(listed), "the same, as quick-fixes of the diagnostic"
    assert all(a.kind == "quickfix" and list(a.diagnostics) == [diagnostic] for a in fixes.values())

    resolved = await editor.client.code_action_resolve_async(listed[ADD_BOTH])
    [change] = resolved.edit.document_changes
    assert change.text_document.version == editor.versions[uri]
    assert editor.apply_edit(types.ApplyWorkspaceEditParams(edit=resolved.edit)).applied
    assert editor.text(uri) == WITH_THE_EXAMPLES

    assert not await editor.diagnostics_for(uri, lambda found: not loose(found)), "the function changed"
    assert not example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return 10.0")))
    editor.save(uri)
    await editor.wait_for_log(checked)
    assert not editor.client.diagnostics[uri]


def checked(line: str) -> bool:
    return line.endswith("doctests of fees.py: ran 1 function, 0 cached, 0 problems")


def bare() -> types.ClientCapabilities:
    """VS Code's capabilities without `documentChanges`, `codeAction/resolve` and a progress UI."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.workspace and capabilities.workspace.workspace_edit and capabilities.window
    capabilities.workspace.workspace_edit.document_changes = False
    capabilities.workspace.workspace_edit.resource_operations = None
    assert capabilities.text_document and capabilities.text_document.code_action
    capabilities.text_document.code_action.resolve_support = None
    capabilities.window.work_done_progress = False
    return capabilities


@pytest_asyncio.fixture(loop_scope="module")
async def bare_editor(servers: Servers, fake: ScriptedModel, request: pytest.FixtureRequest):
    async for editor in clean_editor(servers, request, "bare", bare()):
        yield editor


async def test_a_client_without_document_changes_resolve_or_progress_gets_the_edit_in_the_action(
        bare_editor: Editor, fake: ScriptedModel):
    editor = bare_editor
    uri, result = await generate_fees(editor, fake)

    assert result["status"] == "passed_loosely", result
    assert editor.client.progress_reports == {}
    assert any(counts(result) in message for message in editor.messages()), "the end is shown: no progress UI"
    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return 10.0")))
    action = listed[ADD_FIRST]
    assert action.edit is not None and action.edit.document_changes is None
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "    >>> late_fee(30)\n    10.0\n"
    assert editor.apply_edit(types.ApplyWorkspaceEditParams(edit=action.edit)).applied
    assert editor.text(uri) == FEES.replace("    1.5\n", "    1.5\n    >>> late_fee(30)\n    10.0\n") + BODY


async def test_by_default_the_run_passes_with_hover_and_the_actions_but_no_diagnostic(
        default_editor: Editor, fake: ScriptedModel):
    editor = default_editor
    uri, result = await generate_fees(editor, fake)

    assert result["status"] == "passed", result
    assert counts(result) in result["message"], result
    assert "code actions on `late_fee` add examples" in result["message"]
    assert editor.text(uri) == FEES + BODY
    hover = await editor.hover(uri, 0, 6)
    assert hover is not None and f"```python\n{SUGGESTED}```" in hover.contents.value
    assert "changes of the body its examples and tests do not catch" in hover.contents.value
    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return 10.0")))
    assert list(listed) == [ADD_FIRST, "Add example `late_fee(103)` → 10.0", ADD_BOTH]
    editor.save(uri)
    await editor.wait_for_log(checked)
    assert not loose(editor.client.diagnostics.get(uri, []))


LABELS = '''from typing import Any


def join_all(items: list[Any]) -> str:
    """The items joined by commas.

    >>> join_all(["a", "b"])
    'a, b'
    """
'''
JOINS_STRINGS_ONLY = '```python\ndef join_all(items):\n    return ", ".join(items)\n```'


async def test_an_admitted_input_the_body_raises_on_is_on_hover_and_offered_as_an_example(
        default_editor: Editor, fake: ScriptedModel):
    editor = default_editor
    fake.queue(JOINS_STRINGS_ONLY)
    uri = editor.open("labels.py", LABELS)
    line = line_of(LABELS, "def join_all")
    actions = await editor.code_actions(uri, line) or []
    [action] = [a for a in actions if a.title == "Generate & self-debug"]
    result = await editor.run(action.command)

    assert result["status"] == "passed", result  # strict_signatures is off by default
    call = re.search(r"on inputs its annotations admit, `(join_all\(\[.*?\]\))` raises TypeError",
                     result["message"]).group(1)
    hover = await editor.hover(uri, line, 6)
    assert hover is not None
    text = html.unescape(MarkdownIt("commonmark").render(hover.contents.value))
    assert "inputs its annotations admit that it raises on" in text
    assert f">>> {call}\nTraceback (most recent call last):\n    ...\nTypeError: sequence item 0" in text
    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return")))
    assert any(title.startswith(f"Add example `{call}`") for title in listed), list(listed)


UNCAPPED = "```python\ndef late_fee(days):\n    return days * 0.5\n```"
"""Passes late_fee(3) as CAPPED does, and shows another value above 20 days."""


async def test_a_body_that_disagrees_with_one_an_earlier_run_passed_says_both_values_on_hover(
        default_editor: Editor, fake: ScriptedModel):
    editor = default_editor
    uri, first = await generate_fees(editor, fake)
    assert first["status"] == "passed", first
    editor.replace(uri, BODY, "")  # back to the stub: the user asks again
    fake.queue(UNCAPPED)
    [action] = [a for a in await editor.code_actions(uri, 0) or [] if a.title == "Generate & self-debug"]
    second = await editor.run(action.command)

    assert second["status"] == "passed", second  # a disagreement informs; it withholds nothing
    said = re.search(r"another body that passes them disagrees: `late_fee\((\d+)\)` is ([\d.]+) with "
                     r"this body, 10\.0 with the body a run passed on \d{4}-\d\d-\d\d \d\d:\d\d",
                     second["message"])
    assert said is not None, second["message"]
    days, value = said.groups()
    assert float(value) == int(days) * 0.5 and int(days) > 20
    hover = await editor.hover(uri, 0, 6)
    assert hover is not None
    text = html.unescape(MarkdownIt("commonmark").render(hover.contents.value))
    assert f"`late_fee({days})` is {value} with this body, 10.0 with the body a run passed on" in text
    assert f">>> late_fee({days})\n{value}" in text  # offered with this body's value, to confirm it
    listed = example_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return")))
    assert f"Add example `late_fee({days})` → {value}" in listed, list(listed)
