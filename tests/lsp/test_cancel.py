"""A running generation is cancellable from the progress UI, by `$/cancelRequest` and by command;
the document is untouched, the progress ends, and the server keeps answering meanwhile."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.fakes.openai_server import FakeOpenAI, Hang
from tests.lsp.editor import Editor
from tests.lsp.sources import ADD_STUB
from tests.lsp.test_code_actions import line_of

STUB_LINE = line_of(ADD_STUB, "    ...\n")


async def started(editor: Editor, fake: FakeOpenAI) -> str:
    """Wait until the run has begun its progress and is waiting on the model; its progress token."""

    async def wait() -> str:
        while True:
            for token, reports in editor.client.progress_reports.items():
                if reports and fake.chat_requests:
                    return str(token)
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(wait(), 30)


def ended(editor: Editor, token: str) -> types.WorkDoneProgressEnd:
    end = editor.client.progress_reports[token][-1]
    assert isinstance(end, types.WorkDoneProgressEnd)
    return end


async def test_cancel_from_the_progress_ui(editor: Editor, fake: FakeOpenAI):
    fake.queue(Hang())
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    run = asyncio.create_task(editor.execute(action.command))
    token = await started(editor, fake)

    # Meanwhile the server answers: the stub now offers to cancel, other files get their actions.
    [cancel_action] = await editor.code_actions(uri, STUB_LINE)
    assert cancel_action.title == "Cancel generating `add`"
    other = editor.open("other.py", ADD_STUB)
    assert (await editor.code_actions(other, STUB_LINE))[0].title == "Generate & self-debug"
    assert await editor.hover(uri, line_of(ADD_STUB, "def add"), 5) is None

    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(run, 30)

    assert result["status"] == "cancelled"
    assert "cancelled" in ended(editor, token).message
    assert editor.text(uri) == ADD_STUB and editor.applied == []
    assert editor.statuses[-1]["state"] == "idle"


async def test_cancel_request_on_the_command(editor: Editor, fake: FakeOpenAI):
    fake.queue(Hang())
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    params = types.ExecuteCommandParams(command=action.command.command, arguments=action.command.arguments)
    request = asyncio.ensure_future(
        editor.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="run-1")
    )
    token = await started(editor, fake)

    editor.client.cancel_request(types.CancelParams(id="run-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(request, 30)

    async def progress_end() -> types.WorkDoneProgressEnd:
        while not isinstance(editor.client.progress_reports[token][-1], types.WorkDoneProgressEnd):
            await asyncio.sleep(0.05)
        return ended(editor, token)

    assert "cancelled" in (await asyncio.wait_for(progress_end(), 30)).message
    assert editor.text(uri) == ADD_STUB and editor.applied == []


async def test_cancel_command_and_one_run_per_function(editor: Editor, fake: FakeOpenAI):
    fake.queue(Hang())
    uri = editor.open("mod.py", ADD_STUB)
    [action] = await editor.code_actions(uri, STUB_LINE)
    run = asyncio.create_task(editor.execute(action.command))
    await started(editor, fake)

    second = await editor.execute(action.command)
    assert second["status"] == "busy"

    stopped = await editor.execute(
        types.Command(title="", command="pycapsule.cancel", arguments=[{"uri": uri}])
    )
    assert stopped == {"cancelled": 1}
    assert (await asyncio.wait_for(run, 30))["status"] == "cancelled"
    assert editor.text(uri) == ADD_STUB
