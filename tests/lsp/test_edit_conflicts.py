"""Nothing the user typed is ever lost: typing elsewhere during a run is kept and the edit moves
with it; changing the function itself makes the server refuse the edit and say so."""

from __future__ import annotations

import asyncio

from tests.fakes.openai_server import Delay, FakeOpenAI, Text
from tests.lsp.editor import Editor
from tests.lsp.sources import ADD_RIGHT, ADD_STUB
from tests.lsp.test_cancel import STUB_LINE, started


async def start_slow_run(editor: Editor, fake: FakeOpenAI) -> tuple[str, asyncio.Task]:
    fake.queue(Delay(1.0, Text(ADD_RIGHT)))
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    run = asyncio.create_task(editor.run(action.command))
    await started(editor, fake)
    return uri, run


async def test_typing_elsewhere_during_the_run_is_kept(editor: Editor, fake: FakeOpenAI):
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


async def test_changing_the_function_during_the_run_refuses_the_edit(editor: Editor, fake: FakeOpenAI):
    uri, run = await start_slow_run(editor, fake)
    editor.replace(uri, "    ...\n", "    return a - b  # my own attempt\n")
    typed = editor.text(uri)

    result = await asyncio.wait_for(run, 60)

    assert result["status"] == "refused", result
    assert editor.text(uri) == typed and editor.applied == []
    assert any("untouched" in m and "`add`" in m for m in editor.messages())


async def test_typing_while_the_edit_is_in_flight_is_kept(editor: Editor, fake: FakeOpenAI):
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
