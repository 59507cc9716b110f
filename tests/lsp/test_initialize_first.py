"""The LSP's order, held with a raw client on stdio: a request before `initialize` gets ServerNotInitialized
(-32002) and no traceback; after `initialize` the same request is answered, and a run needs no
`initialized` to go ahead."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import client_capabilities, make_test_lsp_client

from tests.fakes.openai_server import Hang
from tests.lsp.conftest import TEST_OPTIONS
from tests.lsp.editor import framed, server_env
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import ADD_STUB

SERVER = Path(__file__).resolve().parents[2] / "server"


def send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(framed(message))
    process.stdin.flush()


def receive(process: subprocess.Popen[bytes], wanted_id: int) -> dict[str, Any]:
    """The response to request `wanted_id` (notifications and server requests before it are skipped)."""
    assert process.stdout is not None
    while True:
        length = 0
        while (line := process.stdout.readline().strip()):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        message = json.loads(process.stdout.read(length))
        if message.get("id") == wanted_id and "method" not in message:
            return message


def test_a_request_before_initialize_is_refused_with_server_not_initialized(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYCAPSULE_"))},
           "PYTHONPATH": str(SERVER), "XDG_CACHE_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "pycapsule", "serve"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    hover = {"method": "textDocument/hover", "params": {"textDocument": {"uri": (tmp_path / "m.py").as_uri()},
                                                        "position": {"line": 0, "character": 0}}}
    try:
        send(process, {"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (tmp_path / "m.py").as_uri(), "languageId": "python", "version": 1, "text": "x = 1\n"}}})
        send(process, {"id": 1, **hover})
        early = receive(process, 1)
        send(process, {"id": 2, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                   "capabilities": {}}})
        assert "capabilities" in receive(process, 2)["result"]
        send(process, {"method": "initialized", "params": {}})
        send(process, {"id": 3, **hover})
        later = receive(process, 3)
        send(process, {"id": 4, "method": "shutdown"})
        receive(process, 4)
        send(process, {"method": "exit"})
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert early["error"]["code"] == -32002, early
    assert "error" not in later, later
    assert b"Traceback" not in stderr, stderr.decode()


async def test_a_run_started_before_initialized_goes_ahead_with_the_initialization_options(
    fake: ScriptedModel, project: Path
) -> None:
    """Between `initialize`'s answer and `initialized` a client may already send requests; a run started
    then works with the settings the client sent in `initialize` instead of waiting at "starting"."""
    client = make_test_lsp_client()
    env = server_env(fake.base_url, project.parent)
    await client.start_io(sys.executable, "-m", "pycapsule", "serve", env=env, cwd=str(project))
    try:
        client.capabilities = client_capabilities("visual-studio-code")  # what initialize_session keeps
        await client.initialize_async(types.InitializeParams(
            capabilities=client.capabilities, root_uri=project.as_uri(), initialization_options=TEST_OPTIONS))
        uri = (project / "mod.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=ADD_STUB)))
        fake.queue(Hang())
        answer = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="pycapsule.generate", arguments=[{"uri": uri, "qualname": "add"}])), 30)

        assert answer["status"] == "started", answer
        await fake.asked(30)  # the run got as far as the model with no `initialized`
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="pycapsule.cancel", arguments=[]))
    finally:
        await client.shutdown_session()
