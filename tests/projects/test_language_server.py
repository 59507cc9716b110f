"""The language server in real projects, driven by a real LSP client with VS Code's capabilities (and
Neovim's where the edit differs): diagnostics on open and save in a package module, lines counted right
with form feeds, functions under compound statements, and "Generate & self-debug" with the scripted model,
whose result hover names with what verified it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.editor import Editor
from tests.lsp.test_code_actions import line_of
from tests.lsp.test_hover import hover_items
from tests.projects import builders
from tests.projects.cli import cli_env
from tests.projects.test_generate_cli import GROSS

WRONG_GROSS = "return _round_money(net * TAX)"


def open_file(editor: Editor, path: Path) -> str:
    """The editor opens a file the project already holds, with its text as on disk."""
    return editor.open(str(path.relative_to(editor.root)), path.read_bytes().decode("utf-8"))


async def generate_at(editor: Editor, uri: str, needle: str) -> dict[str, Any]:
    """Choose "Generate & self-debug" with the cursor on the line holding `needle`; how the run ended."""
    actions = await editor.code_actions(uri, line_of(editor.text(uri), needle))
    assert actions, f"no action offered at {needle!r}"
    [action] = [a for a in actions if a.title == "Generate & self-debug"]
    assert action.command is not None
    return await editor.run(action.command)


def messages_of(diagnostics: list[types.Diagnostic]) -> list[tuple[int, str]]:
    return sorted((d.range.start.line, d.message) for d in diagnostics)


async def test_diagnostics_in_a_package_module_with_relative_imports(editor: Editor, project: Path):
    module = builders.package_with_relative_imports(project)
    module.write_text(module.read_text().replace("return _round_money(net * (1 + TAX))", WRONG_GROSS))
    uri = open_file(editor, module)
    text = editor.text(uri)

    found = await editor.diagnostics_for(uri, bool, timeout=30)

    assert messages_of(found) == [
        (line_of(text, ">>> gross(10)"), "doctest failed: expected 12.0, got 2.0"),
        (line_of(text, ">>> twice_gross(10)"), "doctest failed: expected 24.0, got 4.0"),
    ]
    editor.replace(uri, WRONG_GROSS, "return _round_money(net * (1 + TAX))")
    editor.save(uri)
    assert await editor.diagnostics_for(uri, lambda now: not now, timeout=30) == []


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
async def test_form_feeds_above_a_function_count_as_editors_count_lines(
        editor: Editor, project: Path, newline: str):
    module = builders.form_feeds(project, newline)
    uri = open_file(editor, module)
    text = editor.text(uri)
    second = line_of(text, ">>> second()")
    found = await editor.diagnostics_for(uri, bool, timeout=30)
    assert messages_of(found) == [(second, "doctest failed: expected 2, got 3")]

    editor.replace(uri, "return 3", "return 5")  # an incremental change below form feeds lands where typed
    editor.save(uri)
    got_5 = [(second, "doctest failed: expected 2, got 5")]
    found = await editor.diagnostics_for(uri, lambda now: messages_of(now) == got_5, timeout=30)
    assert messages_of(found) == got_5


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
async def test_a_changed_body_below_form_feeds_is_run_again(editor: Editor, project: Path, newline: str):
    module = builders.form_feeds(project, newline)
    uri = open_file(editor, module)
    await editor.diagnostics_for(uri, bool, timeout=30)

    fixed = editor.text(uri).replace("return 3", "return 2")
    editor._changed(uri, fixed, [types.TextDocumentContentChangeWholeDocument(text=fixed)])
    editor.save(uri)
    cleared = await editor.diagnostics_for(uri, lambda now: not now, timeout=30)
    assert cleared == [], "a stale result was shown"


async def test_a_failing_function_under_match_is_diagnosed(editor: Editor, project: Path):
    module = builders.functions_under_compound_statements(project)
    module.write_text(module.read_text().replace('return "match"', 'return "nope"'))
    uri = open_file(editor, module)
    found = await editor.diagnostics_for(uri, bool, timeout=30)
    assert messages_of(found) == [
        (line_of(editor.text(uri), ">>> under_match()"), "doctest failed: expected 'match', got 'nope'")]


async def test_generate_a_body_using_a_relative_import_and_a_module_helper(
        each_editor: Editor, fake: FakeOpenAI, project: Path, tmp_path: Path):
    editor = each_editor  # the edit that lands differs in shape between the two clients
    module = builders.package_with_relative_imports(project)
    module.write_text(builders.pricing_stub())
    fake.queue(GROSS)
    uri = open_file(editor, module)

    result = await generate_at(editor, uri, "    ...\n")

    assert (result["status"], result["attempts"]) == ("passed", 1), result
    assert editor.text(uri) == builders.pricing_stub().replace(
        "    ...\n", "    return _round_money(net * (1 + TAX))\n")
    editor.save(uri)
    checked = subprocess.run([sys.executable, "-m", "pycapsule", "check", str(module)],
                             env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_generate_a_stub_under_a_for_loop(editor: Editor, fake: FakeOpenAI, project: Path):
    module = builders.compound_stubs(project)
    fake.queue("```python\ndef triple(x):\n    return 3 * x\n```")
    uri = open_file(editor, module)
    result = await generate_at(editor, uri, ">>> triple(3)")
    assert result["status"] == "passed", result
    assert "        return 3 * x\n" in editor.text(uri)


async def test_a_module_that_cannot_be_imported_is_said_before_any_model_call(
        editor: Editor, fake: FakeOpenAI, project: Path):
    module = builders.import_fails_outside_the_target(project, "missing package")
    uri = open_file(editor, module)
    before = editor.text(uri)

    result = await generate_at(editor, uri, "    ...\n")

    assert fake.chat_requests == [], "the model cannot fix the module's other code: it must not be asked"
    assert result["status"] == "error", result
    [error] = [m for m in editor.client.messages if m.type == types.MessageType.Error]
    said = error.message
    assert "\n" not in said and ("line 1" in said or "mod.py:1" in said), said
    assert "surely_not_installed_pkg_3141" in error.message
    assert editor.text(uri) == before and not editor.applied


async def test_a_body_whose_examples_are_all_skipped_is_not_verified(
        editor: Editor, fake: FakeOpenAI, project: Path):
    module = builders.only_skipped_examples(project)
    fake.queue("```python\ndef parse_date(text):\n    return None\n```")
    uri = open_file(editor, module)
    result = await generate_at(editor, uri, "    ...\n")
    assert result["status"] == "not_verified", result


async def test_generate_is_passed_only_when_the_projects_tests_pass(
        editor: Editor, fake: FakeOpenAI, project: Path):
    from tests.projects.test_project_tests import FITS_THE_EXAMPLE, PYTEST_SITE, RIGHT_PERCENT

    module = builders.project_with_tests_and_venv(project, PYTEST_SITE)
    tests_before = (project / "tests/test_core.py").read_bytes()
    fake.queue(FITS_THE_EXAMPLE, RIGHT_PERCENT)
    uri = open_file(editor, module)

    result = await generate_at(editor, uri, "    ...\n")

    assert (result["status"], result["attempts"]) == ("passed", 2), result
    assert "    return f'{part * 100 // whole}{unitconv.PERCENT}'\n" in editor.text(uri)
    assert result["message"] == \
        "`percent` passes 1 example + 2 tests (tests/test_core.py; 1 of 1 body line run) (attempt 2)"
    assert (project / "tests/test_core.py").read_bytes() == tests_before


async def test_hover_names_the_examples_and_project_tests_that_verified_the_result(
        editor: Editor, fake: FakeOpenAI, project: Path):
    from tests.projects.test_project_tests import FITS_THE_EXAMPLE, PYTEST_SITE, RIGHT_PERCENT

    module = builders.project_with_tests_and_venv(project, PYTEST_SITE)
    fake.queue(FITS_THE_EXAMPLE, RIGHT_PERCENT)
    uri = open_file(editor, module)
    assert (await generate_at(editor, uri, "    ...\n"))["status"] == "passed"

    name = line_of(editor.text(uri), "def percent(")
    passed, failed = hover_items(await editor.hover(uri, name, len("def pe")))

    assert passed.split("\n")[1:] == [
        "verified by 1 example + 2 tests (tests/test_core.py; 1 of 1 body line run); they catch 8 of 8 small "
        "changes"], passed
    assert " · passed (attempt 2, restart) · " in passed
    assert " · failed (attempt 1, generate) · " in failed and "verified" not in failed, failed
