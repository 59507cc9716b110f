"""The boundary around the sandbox (issue 13): sockets that reach the host, shared folders as project
roots, and what one job can leave for the next (IPC objects, /dev files, permissions). Each test runs
against bwrap as root, bwrap as an ordinary user and docker."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.docker import PROJECT_DIR as DOCKER_PROJECT_DIR
from pycapsule.sandbox.limits import DEFAULT_LIMITS

from .conftest import CONTAINED, accepting, run

pytestmark = pytest.mark.parametrize("sandbox", CONTAINED, indirect=True)


def test_a_unix_socket_inside_the_project_cannot_be_reached(sandbox: Sandbox, tmp_path: Path) -> None:
    # a short folder: a socket path must fit in 108 bytes
    project = Path(tempfile.mkdtemp(prefix="pc-", dir="/var/tmp"))
    project.chmod(0o755)
    try:
        path = project / "api.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen()
        path.chmod(0o777)  # whoever the sandbox runs as, only the sandbox may stop it
        with accepting(server) as accepted:
            result = run(sandbox, f"""
import os, socket
# the project is at its host path (bwrap) or at {DOCKER_PROJECT_DIR} (docker)
[path] = [p for p in ({str(path)!r}, "{DOCKER_PROJECT_DIR}/api.sock") if os.path.exists(p)]
try:
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    print("CONNECTED")
except OSError as error:
    print("REFUSED", type(error).__name__)
""", project_root=project)
    finally:
        for child in project.iterdir():
            child.unlink()
        project.rmdir()
    assert result.status == "ok", result.detail
    assert result.stdout.startswith("REFUSED"), result.stdout
    assert accepted == []


def test_socketpair_works_and_sockets_that_reach_the_kernel_or_host_are_refused(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import socket
left, right = socket.socketpair()
left.sendall(b"ping")
print("socketpair", right.recv(4).decode())
for name in ("AF_UNIX", "AF_NETLINK", "AF_PACKET", "AF_VSOCK"):
    family = getattr(socket, name, None)
    if family is None:
        print(name, "refused")
        continue
    try:
        socket.socket(family, socket.SOCK_DGRAM if name != "AF_VSOCK" else socket.SOCK_STREAM).close()
        print(name, "created")
    except OSError:
        print(name, "refused")
""")
    assert result.stdout.splitlines() == [
        "socketpair ping", "AF_UNIX refused", "AF_NETLINK refused", "AF_PACKET refused", "AF_VSOCK refused",
    ], result.stdout


def test_supplementary_groups_are_dropped(sandbox: Sandbox, request: pytest.FixtureRequest) -> None:
    if request.node.callspec.params["sandbox"] == "bwrap-user":
        pytest.skip("an unprivileged launcher cannot drop its groups (docs/sandbox.md): "
                    "user namespaces forbid setgroups")
    result = run(sandbox, "import os\nprint(sorted(set(os.getgroups()) - {os.getgid()}))\n")
    assert result.stdout.strip() == "[]", result.stdout


def test_tmp_as_project_root_shows_nothing_of_the_hosts_tmp(sandbox: Sandbox) -> None:
    with tempfile.NamedTemporaryFile("w", prefix="pycapsule-tmp-canary-", dir="/tmp") as canary:
        canary.write("TMP-CANARY")
        canary.flush()
        os.chmod(canary.name, 0o644)
        result = run(sandbox, f"""
import os
print(os.path.exists({canary.name!r}), sorted(os.listdir("/tmp")))
""", project_root=Path("/tmp"))
    assert result.stdout.split()[0] == "False", result.stdout
    assert "pycapsule-tmp-canary" not in result.stdout


def test_dev_shm_is_a_capped_tmpfs(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os
written = 0
try:
    for index in range(24):
        with open(f"/dev/shm/block-{index}", "wb") as handle:
            for _ in range(8):
                handle.write(b"x" * (1 << 20))
                written += 1 << 20
    print("WROTE", written)
except OSError as error:
    print("STOPPED", written, error.errno)
""", timeout=20)
    word, written, *_ = result.stdout.split()
    assert word == "STOPPED", result.stdout
    assert 0 < int(written) <= DEFAULT_LIMITS.scratch_bytes  # usable (POSIX semaphores live there), capped


def test_ipc_objects_and_dev_files_do_not_reach_the_next_job(sandbox: Sandbox) -> None:
    # Python's own sysv/mqueue modules do not exist: ctypes calls libc, as a C extension would.
    first = run(sandbox, """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
print(libc.shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o600) >= 0,
      libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600) >= 0,
      libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600) >= 0)
libc.mq_open.restype = ctypes.c_int
print(libc.mq_open(b"/pycapsule-left-behind", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
open("/dev/shm/left-behind", "w").write("x")
try:
    open("/dev/left-behind", "w").write("x")
except OSError:
    pass
""")
    # Under bwrap's memory watchdog (no cgroup), SysV shared memory and message queues are refused:
    # their memory belongs to no process, so sampling processes would not see it.
    sysv = str(getattr(sandbox, "whole_job_limit", "container") != "watchdog")
    assert first.stdout.split() == [sysv, sysv, "True", "True"], (first.stdout, first.detail)
    second = run(sandbox, """
import os
counts = [len(open(f"/proc/sysvipc/{kind}").read().splitlines()) - 1 for kind in ("shm", "msg", "sem")]
print(counts, os.listdir("/dev/mqueue"), os.listdir("/dev/shm"), os.path.exists("/dev/left-behind"))
""")
    assert second.stdout.strip() == "[0, 0, 0] [] [] False", second.stdout


def test_permissions_a_job_changes_do_not_reach_the_next_job(sandbox: Sandbox) -> None:
    first = run(sandbox, """
import os
os.makedirs("/tmp/a/b/c")
for path in ("/tmp/a/b/c", "/tmp/a/b", "/tmp/a", "/tmp", "/dev/shm", os.environ["HOME"], os.getcwd()):
    try:
        os.chmod(path, 0)
    except OSError:
        pass
""")
    assert first.status == "ok", first.detail
    second = run(sandbox, """
import os
for folder in ("/tmp", "/dev/shm", os.environ["HOME"], os.getcwd()):
    try:
        open(os.path.join(folder, "probe"), "w").write("x")
        print("writable")
    except OSError as error:
        print("LOCKED", folder, error)
print(os.path.exists("/tmp/a"))
""")
    assert second.stdout.split() == ["writable"] * 4 + ["False"], second.stdout
