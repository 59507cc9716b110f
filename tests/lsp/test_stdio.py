"""What `pycapsule serve` reads its messages from: a pipe (every editor here), a socket handed over as both
stdin and stdout, or a file; odd input (an overlong header line, the input ending inside a message) never
takes the server down with a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.editor import framed

SERVER = Path(__file__).resolve().parents[2] / "server"


INITIALIZE = framed({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                               "capabilities": {}}})
GOODBYE = framed({"id": 2, "method": "shutdown"}) + framed({"method": "exit"})


def responses(output: bytes) -> dict[int, dict[str, Any]]:
    """The responses in `output`, by id (notifications and the server's own requests left out)."""
    found = {}
    while output:
        header, _, rest = output.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message = json.loads(rest[:length])
        output = rest[length:]
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


def environment(tmp_path: Path) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYCAPSULE_"))}
    private = {"XDG_CACHE_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    return {**kept, "PYTHONPATH": str(SERVER), **private}


def serve(tmp_path: Path, stdin: Any, stdout: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "pycapsule", "serve"], stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE, env=environment(tmp_path), cwd=tmp_path)


def test_messages_in_a_pipe_are_answered_and_exit_ends_the_server(tmp_path: Path) -> None:
    process = serve(tmp_path, subprocess.PIPE, subprocess.PIPE)
    output, stderr = process.communicate(INITIALIZE + GOODBYE, timeout=60)
    answered = responses(output)
    assert "capabilities" in answered[1]["result"] and answered[2]["result"] is None
    assert process.returncode == 0 and b"Traceback" not in stderr, stderr.decode()


def test_messages_from_a_file_are_answered(tmp_path: Path) -> None:
    (tmp_path / "in").write_bytes(INITIALIZE + GOODBYE)
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        process = serve(tmp_path, stdin, stdout)
        _, stderr = process.communicate(timeout=60)
    assert set(responses((tmp_path / "out").read_bytes())) == {1, 2}
    assert process.returncode == 0 and b"Traceback" not in stderr, stderr.decode()


def test_one_socket_as_both_stdin_and_stdout_is_served(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        process = serve(tmp_path, theirs, theirs)
        theirs.close()
        ours.sendall(INITIALIZE + GOODBYE)
        output = b""
        ours.settimeout(60)
        while chunk := ours.recv(65536):
            output += chunk
        _, stderr = process.communicate(timeout=60)
    assert set(responses(output)) == {1, 2}
    assert process.returncode == 0 and b"Traceback" not in stderr, stderr.decode()


def test_an_overlong_header_line_is_dropped_and_the_next_message_is_answered(tmp_path: Path) -> None:
    junk = b"X-Junk: " + b"a" * (3 << 20) + b"\r\n\r\n"
    process = serve(tmp_path, subprocess.PIPE, subprocess.PIPE)
    output, stderr = process.communicate(junk + INITIALIZE + GOODBYE, timeout=60)
    assert set(responses(output)) == {1, 2}
    assert b"Traceback" not in stderr, stderr.decode()


@pytest.mark.parametrize("cut", ["in the headers", "in the body"])
def test_input_ending_inside_a_message_ends_the_server_without_a_traceback(tmp_path: Path, cut: str) -> None:
    header = b"Content-Length: 80\r\n"
    partial = header if cut == "in the headers" else header + b'\r\n{"jsonrpc"'
    process = serve(tmp_path, subprocess.PIPE, subprocess.PIPE)
    output, stderr = process.communicate(INITIALIZE + partial, timeout=60)
    assert set(responses(output)) == {1}
    assert b"Traceback" not in stderr, stderr.decode()
