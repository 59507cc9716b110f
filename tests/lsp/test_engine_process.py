"""Generation runs in a process of the server's own, not in the server's interpreter: a big module's
parse and the engine's work cannot hold up the requests the editor sends meanwhile. The process is
started on the first run; one that dies ends its runs with one sentence, and the next run gets a new one."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from tests.fakes.openai_server import Hang
from tests.lsp.editor import Editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB
from tests.lsp.test_code_actions import line_of

STUB_LINE = line_of(ADD_STUB, "    ...\n")


def engine_processes(server_pid: int) -> list[int]:
    """The server's children that are the engine's process."""
    children = Path(f"/proc/{server_pid}/task")
    found = []
    for task in children.iterdir():
        for pid in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"pycapsule.lsp.engine_host" in command:
                found.append(int(pid))
    return found


async def test_the_run_happens_in_the_engines_process_and_a_killed_one_is_replaced(
    editor: Editor, fake: ScriptedModel
):
    server_pid = editor.client._server.pid
    uri = editor.open("mod.py", ADD_STUB)
    fake.queue(Hang())
    [action] = await editor.code_actions(uri, STUB_LINE)
    answer = await editor.execute(action.command)
    await fake.asked()  # the model was asked: the run is under way
    [host] = engine_processes(server_pid)

    os.kill(host, signal.SIGKILL)
    end = await editor.run_end(answer["runId"], 30)

    assert end["status"] == "error" and "engine's process stopped" in end["message"], end
    assert editor.text(uri) == ADD_STUB and editor.applied == []
    fake.queue(ADD_RIGHT)
    again = await asyncio.wait_for(editor.run(action.command), 60)
    assert again["status"] == "passed", again
    assert "return a + b" in editor.text(uri)
    [replacement] = engine_processes(server_pid)
    assert replacement != host
