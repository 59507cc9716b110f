"""No unix socket a job can make reaches a socket file on the host (issue 46, item 3).

`socket(AF_UNIX)` is refused by the seccomp filter (test_trust_boundary.py). These tests cover the
other way to hold a unix socket, `socketpair()`: a datagram or seqpacket pair is refused outright,
and a stream pair (what asyncio and multiprocessing use, still allowed) is connected for good, so it
can neither `connect()` to a path nor send to one. The target is the worst case: socket files in the
project the job is given, writable by whatever uid the sandbox runs as. Each test runs against bwrap
as root, bwrap as an ordinary user and docker.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.docker import PROJECT_DIR as DOCKER_PROJECT_DIR

from .conftest import CONTAINED, run

pytestmark = pytest.mark.parametrize("sandbox", CONTAINED, indirect=True)

KINDS = ("dgram", "seqpacket", "stream")


class Listeners:
    """A datagram, a seqpacket and a stream socket file in `folder`, each anyone may write to."""

    def __init__(self, folder: Path) -> None:
        self.sockets: dict[str, socket.socket] = {}
        for kind in KINDS:
            server = socket.socket(socket.AF_UNIX, getattr(socket, f"SOCK_{kind.upper()}"))
            server.bind(str(folder / f"{kind}.sock"))
            if kind != "dgram":
                server.listen()
            (folder / f"{kind}.sock").chmod(0o777)
            server.setblocking(False)
            self.sockets[kind] = server

    def received(self) -> list[str]:
        """What reached any of them. A datagram sent or a connection made waits in the socket's
        queue until read, so reading after the job sees everything the job delivered."""
        got: list[str] = []
        for kind, server in self.sockets.items():
            while True:
                try:
                    if kind == "dgram":
                        got.append(f"{kind}: datagram {server.recv(1024)!r}")
                    else:
                        connection, _ = server.accept()
                        connection.settimeout(1)
                        with connection, contextlib.suppress(OSError):
                            got.append(f"{kind}: connection sending {connection.recv(1024)!r}")
                except BlockingIOError:
                    break
        return got

    def close(self) -> None:
        for server in self.sockets.values():
            server.close()


@pytest.fixture
def project_with_sockets() -> Iterator[tuple[Path, Listeners]]:
    """A project (0755: a world-writable root would be refused as a shared folder) whose `sockets/`
    folder and the socket files in it are world-writable, so that only the sandbox stands between
    the job's uid and them. Short, under /var/tmp: a socket path must fit in 108 bytes, and the
    ordinary account bwrap-user runs as must be able to reach it."""
    project = Path(tempfile.mkdtemp(prefix="pc-", dir="/var/tmp"))
    project.chmod(0o755)
    folder = project / "sockets"
    folder.mkdir()
    folder.chmod(0o777)
    listeners = Listeners(folder)
    try:
        yield project, listeners
    finally:
        listeners.close()
        shutil.rmtree(project, ignore_errors=True)


def test_no_socketpair_reaches_a_world_writable_socket_file_in_the_project(
    sandbox: Sandbox, project_with_sockets: tuple[Path, Listeners]
) -> None:
    project, listeners = project_with_sockets
    result = run(sandbox, f"""
import errno, os, socket

# the project is at its host path (bwrap) or at {DOCKER_PROJECT_DIR} (docker)
folder = next(p for p in ({str(project / "sockets")!r}, "{DOCKER_PROJECT_DIR}/sockets") if os.path.isdir(p))
targets = {{kind: os.path.join(folder, kind + ".sock") for kind in {KINDS!r}}}

def pair(kind, flags=0):
    return socket.socketpair(socket.AF_UNIX, getattr(socket, "SOCK_" + kind.upper()) | flags)

def attempt(label, kind, send, peer_open=True):
    left, right = pair(kind)  # both ends held: a pair with its peer alive, as it is made
    if not peer_open:  # with its peer gone, a datagram socket may connect() elsewhere
        right.close()
    try:
        send(left)
        print(label, "DONE")
    except OSError as error:
        print(label, "refused", errno.errorcode[error.errno])

def connect_and_send(end, target):
    end.connect(target)
    end.send(b"connect+send")

for kind in {KINDS!r}:
    made = False
    for flags, how in ((socket.SOCK_NONBLOCK, "nonblocking"), (0, "plain")):
        try:
            pair(kind, flags)
            print("socketpair", kind, how, "made")
            made = True
        except OSError as error:
            print("socketpair", kind, how, "refused", errno.errorcode[error.errno])
    if not made:
        continue
    for name, target in targets.items():
        attempt(f"{{kind}} pair: sendto {{name}}", kind, lambda end: end.sendto(b"sendto", target))
        attempt(f"{{kind}} pair: sendmsg with address to {{name}}", kind,
                lambda end: end.sendmsg([b"sendmsg"], [], 0, target))
        attempt(f"{{kind}} pair: connect+send {{name}}", kind, lambda end: connect_and_send(end, target))
        attempt(f"{{kind}} pair, peer closed: connect+send {{name}}", kind,
                lambda end: connect_and_send(end, target), peer_open=False)
        attempt(f"{{kind}} pair, peer closed: sendto {{name}}", kind,
                lambda end: end.sendto(b"peerless sendto", target), peer_open=False)
""", project_root=project)
    assert result.status == "ok", result.detail
    assert listeners.received() == [], result.stdout
    lines = result.stdout.splitlines()
    # a datagram or seqpacket pair is never made, with or without flags: the filter's EPERM
    for kind in ("dgram", "seqpacket"):
        for how in ("nonblocking", "plain"):
            assert f"socketpair {kind} {how} refused EPERM" in lines, result.stdout
    # a stream pair is made, and every way of sending through it to a path is refused
    made = [line for line in lines if line.startswith("socketpair stream")]
    assert made == ["socketpair stream nonblocking made", "socketpair stream plain made"], result.stdout
    stream = [line for line in lines if line.startswith("stream pair")]
    assert len(stream) == 5 * len(KINDS), result.stdout
    assert all(" refused " in line for line in stream), result.stdout


def test_asyncio_and_multiprocessing_pipes_still_work(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import asyncio, multiprocessing, socket

async def answer():
    await asyncio.sleep(0)
    return 42
print("asyncio", asyncio.run(answer()))

parent, child = multiprocessing.Pipe()
worker = multiprocessing.get_context("fork").Process(target=lambda: child.send(child.recv() * 2))
worker.start()
parent.send(21)
print("Pipe", parent.recv())
worker.join(5)

left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
left.sendall(b"ping")
print("nonblocking stream pair", right.recv(4).decode())
""")
    assert result.status == "ok", result.detail
    assert result.stdout.splitlines() == [
        "asyncio 42", "Pipe 42", "nonblocking stream pair ping",
    ], (result.stdout, result.stderr)
