"""A run that gives up leaves its closest try to the user (issue 49 item 3, as `generate --write-closest`
does on the command line): the end message names the code action "Apply the closest try of ...", offered on
that function; picking it applies that body, which still fails, as one edit, refused when the function
changed since the run."""

from __future__ import annotations

from tests.lsp.editor import Editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, ADD_WRONG, BROKEN_DOUBLE, DOUBLE_RIGHT
from tests.lsp.test_code_actions import line_of
from tests.lsp.test_generate import generate

ADD_ONE_RIGHT = '```python\ndef add(a, b):\n    """Add two numbers."""\n    return abs(a) + b\n```'
"""Right for add(1, 2), wrong for add(-1, 1): one example short of passing."""
BODY_LINE = "    ...\n"


def closest_actions(actions: list | None) -> list:
    return [a for a in actions or [] if a.title.startswith("Apply the closest try")]


async def test_a_run_that_gives_up_offers_its_closest_try_and_applies_it_when_picked(
    editor: Editor, fake: ScriptedModel
):
    fake.queue(ADD_WRONG, ADD_ONE_RIGHT, ADD_WRONG.replace("+ 1", "+ 2"))
    uri = editor.open("mod.py", ADD_STUB)

    result = await generate(editor, uri)

    assert result["status"] == "gave_up", result
    title = "Apply the closest try of `add` (attempt 2, still failing)"
    assert f'code action "{title}"' in result["message"], result["message"]
    assert editor.text(uri) == ADD_STUB and editor.applied == []  # never applied by itself
    [action] = closest_actions(await editor.code_actions(uri, line_of(ADD_STUB, BODY_LINE)))
    assert action.title == title and action.command.command == "pycapsule.applyClosest"

    answer = await editor.execute(action.command)

    assert answer["status"] == "applied", answer
    assert "return abs(a) + b" in editor.text(uri)
    assert not closest_actions(await editor.code_actions(uri, line_of(editor.text(uri), "abs(a)")))


async def test_the_closest_try_is_refused_once_the_function_changed(editor: Editor, fake: ScriptedModel):
    fake.queue(ADD_WRONG, ADD_ONE_RIGHT, ADD_WRONG.replace("+ 1", "+ 2"))
    uri = editor.open("mod.py", ADD_STUB)
    assert (await generate(editor, uri))["status"] == "gave_up"
    editor.replace(uri, BODY_LINE, "    return a - b\n")  # the user wrote a body meanwhile
    [action] = closest_actions(await editor.code_actions(uri, line_of(editor.text(uri), "return a - b")))

    answer = await editor.execute(action.command)

    assert answer["status"] == "refused", answer
    assert "return a - b" in editor.text(uri) and "abs(a)" not in editor.text(uri)


async def test_a_new_run_in_the_editor_starts_from_what_earlier_runs_found(
    editor: Editor, fake: ScriptedModel
):
    """The code action uses the same history as `generate` (issue 49 item 2): the first request of a new run
    names the earlier failures, and a body an earlier run tried is not run again."""
    fake.queue(ADD_WRONG, ADD_WRONG.replace("+ 1", "+ 2"), ADD_WRONG.replace("+ 1", "+ 3"))
    uri = editor.open("again.py", ADD_STUB)
    assert (await generate(editor, uri))["status"] == "gave_up"
    fake.queue(ADD_WRONG, ADD_RIGHT)

    [action] = [a for a in await editor.code_actions(uri, line_of(ADD_STUB, BODY_LINE))
                if a.title == "Generate & self-debug"]
    result = await editor.run(action.command)

    assert result["status"] == "passed", result
    first_of_the_new_run = fake.chat_requests[3]
    assert "Earlier attempts failed like this" in first_of_the_new_run.task_message
    assert "add(1, 2)" in first_of_the_new_run.task_message
    assert "already failed" in fake.chat_requests[4].task_message


async def test_the_quick_fix_does_not_run_again_a_body_an_earlier_run_tried(
    editor: Editor, fake: ScriptedModel
):
    """The quick-fix uses the same history: a fix that repeats a body an earlier run tried is not run again
    as new; the model is told it already failed."""
    tried = [f"```python\ndef double(x):\n    return {body}\n```" for body in ("x * 4", "x + 3", "x * 5")]
    fake.queue(*tried)
    uri = editor.open("fixes.py", BROKEN_DOUBLE)
    diagnostics = await editor.diagnostics_for(uri, bool)

    def quick_fix(actions: list | None):
        [fix] = [a for a in actions or [] if a.title.startswith("Self-debug")]
        return fix

    fix = quick_fix(await editor.code_actions(uri, diagnostics[0].range.start.line, diagnostics))
    assert (await editor.run(fix.command))["status"] == "gave_up"
    fake.queue(tried[0], DOUBLE_RIGHT)

    result = await editor.run(fix.command)

    assert result["status"] == "passed", result
    assert "already failed" in fake.chat_requests[4].task_message
    assert "return x * 2" in editor.text(uri)
