"""Generation runs in a process of the server's own, not in the server's interpreter: a big module's
parse and the engine's work cannot hold up the requests the editor sends meanwhile. The process is
started on the first run; one that dies ends its runs with one sentence, and the next run gets a new one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pycapsule.lsp.engine_host import RESOLVE_NICENESS, RUN_THREADS
from pygls.exceptions import JsonRpcInvalidParams

from tests.fakes.openai_server import Hang
from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import Editor, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_RIGHT, ADD_STUB, BROKEN_DOUBLE
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


@dataclass(frozen=True)
class WaitingRun:
    uri: str
    action: types.CodeAction
    answer: dict[str, Any]
    host: int
    """The engine's process."""


async def run_waiting_for_the_model(editor: Editor, fake: ScriptedModel) -> WaitingRun:
    """A generation on a stub, under way: resolved, and its model request hangs."""
    uri = editor.open("mod.py", ADD_STUB)
    fake.queue(Hang())
    [action] = await editor.code_actions(uri, STUB_LINE)
    answer = await editor.execute(action.command)
    await fake.asked()
    [host] = engine_processes(editor.client._server.pid)
    return WaitingRun(uri, action, answer, host)


async def test_the_run_happens_in_the_engines_process_and_a_killed_one_is_replaced(
    editor: Editor, fake: ScriptedModel
):
    run = await run_waiting_for_the_model(editor, fake)
    uri, action, answer, host = run.uri, run.action, run.answer, run.host

    os.kill(host, signal.SIGKILL)
    end = await editor.run_end(answer["runId"], 30)

    assert end["status"] == "error" and "engine's process stopped" in end["message"], end
    assert editor.text(uri) == ADD_STUB and editor.applied == []
    fake.queue(ADD_RIGHT)
    again = await asyncio.wait_for(editor.run(action.command), 60)
    assert again["status"] == "passed", again
    assert "return a + b" in editor.text(uri)
    [replacement] = engine_processes(editor.client._server.pid)
    assert replacement != host


async def the_host(editor: Editor) -> int:
    """The engine's process, once there is one (the doctest check of a file just opened starts it)."""
    for _ in range(300):
        if found := engine_processes(editor.client._server.pid):
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError("no engine's process was started")


async def test_a_start_answers_and_requests_behind_it_answer_while_the_engines_process_cannot(
    editor: Editor, fake: ScriptedModel
):
    """The start's answer names the run from the server's own outline: it does not wait for the engine's
    process, which parses the module and builds the capsule after it (issue 67)."""
    uri = editor.open("mod.py", ADD_STUB)
    host = await the_host(editor)
    [action] = await editor.code_actions(uri, STUB_LINE)
    os.kill(host, signal.SIGSTOP)  # it can neither read the start nor answer it
    try:
        answer = await asyncio.wait_for(editor.execute(action.command), 10)
        [cancel] = await asyncio.wait_for(editor.code_actions(uri, STUB_LINE), 10)
    finally:
        os.kill(host, signal.SIGCONT)

    assert answer["status"] == "started" and answer["message"] == "Generating `add`", answer
    assert cancel.title == "Cancel generating `add`", "the run is under way for the editor"
    fake.queue(ADD_RIGHT)
    assert (await editor.run_end(answer["runId"], 60))["status"] == "passed"
    assert "return a + b" in editor.text(uri)


async def test_refused_starts_leave_the_engines_process_free_for_the_next_run(
    editor: Editor, fake: ScriptedModel
):
    uri = editor.open("mod.py", ADD_STUB)
    nowhere = types.Command(title="", command="pycapsule.generate",
                            arguments=[{"uri": uri, "qualname": "nope"}])
    for _ in range(RUN_THREADS):  # as many as the engine's process runs at once
        with pytest.raises(JsonRpcInvalidParams):  # only the engine's process words it: it parses the file
            await editor.execute(nowhere)

    fake.queue(ADD_RIGHT)
    [action] = await editor.code_actions(uri, STUB_LINE)
    assert (await editor.run(action.command, 60))["status"] == "passed"


FOUR_MORE_STUBS = ADD_STUB + "".join(
    f'\n\ndef stub_{n}(x):\n    """Stub {n}.\n\n    >>> stub_{n}(1)\n    1\n    """\n    ...\n'
    for n in range(4)
)


async def test_a_fifth_run_is_followed_while_four_wait_for_the_model(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    """A run's news go from the engine's process's reader thread straight onto the event loop: no thread
    of the server's waits for a run's events (four did, and a fifth run's events waited for one of them)."""
    # the four wait for the model that long
    options = {"pycapsule": {**TEST_OPTIONS["pycapsule"], "requestTimeout": 300, "inactivityTimeout": 300}}
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path), options)
    try:
        uri = editor.open("mod.py", FOUR_MORE_STUBS)
        waiting = []
        for n in range(4):
            fake.queue(Hang())
            generate = types.Command(title="", command="pycapsule.generate",
                                     arguments=[{"uri": uri, "qualname": f"stub_{n}"}])
            waiting.append((await editor.execute(generate))["runId"])
            for _ in range(300):  # until its request is at the model: the next reply is the next run's
                if len(fake.chat_requests) > n:
                    break
                await asyncio.sleep(0.1)
        fake.queue(ADD_RIGHT)
        [action] = await editor.code_actions(uri, STUB_LINE)

        end = await editor.run(action.command, 60)

        assert end["status"] == "passed", end
        assert "return a + b" in editor.text(uri)
        for run_id in waiting:
            cancel = types.Command(title="", command="pycapsule.cancel", arguments=[{"runId": run_id}])
            await editor.execute(cancel)
            assert (await editor.run_end(run_id, 30))["status"] == "cancelled"
    finally:
        await stop_editor(editor)


def thread_niceness(pid: int) -> list[int]:
    """The nice value of each thread of process `pid` (field 19 of /proc/PID/task/TID/stat)."""
    values = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        after_name = (task / "stat").read_text().rsplit(")", 1)[1].split()
        values.append(int(after_name[16]))
    return values


async def test_only_a_starts_parse_gives_way_to_the_editor_not_the_run_it_starts(
    editor: Editor, fake: ScriptedModel
):
    run = await run_waiting_for_the_model(editor, fake)
    own = os.getpriority(os.PRIO_PROCESS, run.host)

    niceness = thread_niceness(run.host)

    assert niceness.count(min(19, own + RESOLVE_NICENESS)) == 1, niceness  # the parse's thread
    assert niceness.count(own) == len(niceness) - 1, niceness  # the run's, the reader's, ...
    cancel = types.Command(title="", command="pycapsule.cancel", arguments=[{"runId": run.answer["runId"]}])
    await editor.execute(cancel)
    assert (await editor.run_end(run.answer["runId"], 30))["status"] == "cancelled"


def descendants(pid: int) -> list[int]:
    """Every process under `pid`."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found.extend([child, *descendants(child)])
    return found


def sandbox_workers(pid: int) -> list[int]:
    """The sandboxes under `pid`: each one's worker (the process that runs its jobs' parents)."""
    def is_worker(process: int) -> bool:
        with contextlib.suppress(OSError):
            return b"pycapsule_worker" in Path(f"/proc/{process}/cmdline").read_bytes()
        return False

    def parent(process: int) -> int:
        return int(Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()[1])

    return [process for process in descendants(pid) if is_worker(process) and not is_worker(parent(process))]


async def test_doctest_diagnostics_come_from_the_engines_process_and_a_killed_one_is_replaced(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path),
                                TEST_OPTIONS)
    try:
        uri = editor.open("mod.py", BROKEN_DOUBLE)
        [diagnostic] = await editor.diagnostics_for(uri, bool)
        assert diagnostic.message == "doctest failed: expected 4, got 6"
        [host] = engine_processes(editor.client._server.pid)  # no run was started: the check started it

        os.kill(host, signal.SIGKILL)
        await asyncio.sleep(0.5)
        editor.replace(uri, "return x * 3", "return x * 5")
        editor.save(uri)

        [again] = await editor.diagnostics_for(uri, lambda found: "got 10" in str(found))
        assert again.message == "doctest failed: expected 4, got 10"
        [replacement] = engine_processes(editor.client._server.pid)
        assert replacement != host
    finally:
        await stop_editor(editor)


async def test_a_projects_runs_and_doctest_checks_share_one_sandbox_closed_at_shutdown(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path),
                                TEST_OPTIONS)
    try:
        server = editor.client._server.pid
        await editor.diagnostics_for(editor.open("mod.py", BROKEN_DOUBLE), bool)
        fake.queue(ADD_RIGHT)
        stub = editor.open("stub.py", ADD_STUB)
        [action] = await editor.code_actions(stub, STUB_LINE)
        assert (await editor.run(action.command))["status"] == "passed"

        workers = sandbox_workers(server)
        if not workers:
            pytest.skip("the sandbox's processes are not the server's (a Docker container)")
        [host] = engine_processes(server)
        assert workers == sandbox_workers(host), "every sandbox is the engine's process's"
        assert len(workers) == 1, "the check's and the run's: one sandbox for the project"
    finally:
        await stop_editor(editor)
    await asyncio.sleep(1)
    assert not any(Path(f"/proc/{worker}").exists() for worker in workers), "shutdown closes the sandbox"
