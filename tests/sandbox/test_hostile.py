"""Hostile programs: each one tries one escape or exhaustion, and each test asserts the specific
containment (not just that a result came back). Run against every real backend; after every test
the same warm sandbox must still run a normal job (see conftest)."""

from __future__ import annotations

import platform
import socket
import time
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.limits import DEFAULT_LIMITS
from pycapsule.sandbox.seccomp import ARCHES

from .conftest import CONTAINED, accepting, run

pytestmark = pytest.mark.parametrize("sandbox", CONTAINED, indirect=True)


def test_network_to_a_host_loopback_server_is_refused(sandbox: Sandbox) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    with accepting(server) as accepted:
        result = run(sandbox, f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    print("CONNECTED")
except OSError as error:
    print("BLOCKED", error.errno)
""")
    assert result.status == "ok", result.detail
    assert result.stdout.startswith("BLOCKED"), result.stdout
    assert accepted == []


def test_network_to_the_outside_and_dns_are_unreachable(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import socket
for target in [("151.101.0.223", 443), ("1.1.1.1", 53)]:
    try:
        socket.create_connection(target, timeout=3)
        print("CONNECTED", target)
    except OSError as error:
        print("BLOCKED", error.errno)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("RESOLVED")
except OSError:
    print("NO DNS")
# netlink sockets are refused (see seccomp.py), so list the interfaces from this namespace's /proc
print(sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]))
""")
    lines = result.stdout.splitlines()
    assert lines[:2] == ["BLOCKED 101", "BLOCKED 101"], result.stdout  # ENETUNREACH: no route at all
    assert lines[2] == "NO DNS"
    assert lines[3] == "['lo']"


def test_a_host_secret_file_is_invisible(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    result = run(sandbox, f"""
for path in [{str(secret)!r}, "/etc/shadow", "/root/.bash_history", "/root/.ssh/id_rsa"]:
    try:
        print(open(path).read()[:40])
    except OSError as error:
        print(type(error).__name__)
""")
    assert "TOP-SECRET-VALUE" not in result.stdout
    lines = result.stdout.splitlines()
    assert len(lines) == 4 and all(line in ("FileNotFoundError", "PermissionError") for line in lines), lines


@pytest.mark.parametrize("given_as_project_root", [False, True])
def test_the_users_home_is_not_readable(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given_as_project_root: bool
) -> None:
    # A home anyone may read, as many are: only the sandbox (and, given as the project root, the
    # shared-folder rule) keeps it out, not its permissions.
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    monkeypatch.setenv("HOME", str(home))
    canary = home / ".pycapsule-home-canary"
    canary.write_text("HOME-CANARY")
    canary.chmod(0o644)
    result = run(sandbox, f"""
import os
try:
    print(open({str(canary)!r}).read())
except OSError as error:
    print(type(error).__name__)
try:
    print(sorted(os.listdir({str(home)!r})))
except OSError as error:
    print(type(error).__name__)
""", project_root=home if given_as_project_root else None)
    assert "HOME-CANARY" not in result.stdout
    assert canary.name not in result.stdout
    assert result.stdout.splitlines()[0] in ("FileNotFoundError", "PermissionError")
    if given_as_project_root:
        assert any("shared folder" in warning for warning in result.warnings), result.warnings


def test_writing_outside_the_work_dir_fails_and_host_canaries_survive(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    inside = project / "canary.txt"
    inside.write_text("alive")
    outside = tmp_path / "outside.txt"
    outside.write_text("alive")
    result = run(sandbox, f"""
import os, shutil
attempts = {{
    "project": lambda: open({str(inside)!r}, "w").write("dead"),
    "project-delete": lambda: os.unlink({str(inside)!r}),
    "outside": lambda: open({str(outside)!r}, "w").write("dead"),
    "usr": lambda: open("/usr/pycapsule-was-here", "w"),
    "root": lambda: open("/pycapsule-was-here", "w"),
    "etc": lambda: open("/etc/pycapsule-was-here", "w"),
}}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "WROTE")
    except OSError as error:
        print(name, "refused")
""", project_root=project)
    assert "WROTE" not in result.stdout, result.stdout
    assert result.stdout.count("refused") == 6
    assert inside.read_text() == "alive"
    assert outside.read_text() == "alive"
    assert not Path("/usr/pycapsule-was-here").exists()


def test_a_symlink_escape_reaches_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "linked-secret.txt"
    secret.write_text("LINKED-SECRET")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "keep.txt").write_text("alive")
    result = run(sandbox, f"""
import os
os.symlink({str(secret)!r}, "to-secret")
os.symlink("/", "to-root")
os.symlink({str(project / "keep.txt")!r}, "to-project")
try:
    print(open("to-secret").read())
except OSError as error:
    print(type(error).__name__)
try:
    open("to-project", "w").write("dead")
    print("WROTE")
except OSError as error:
    print(type(error).__name__)
print(sorted(os.listdir("to-root/proc/1/root")) if os.access("to-root/proc/1/root", os.R_OK) else "no-root")
""", project_root=project)
    assert "LINKED-SECRET" not in result.stdout
    assert "WROTE" not in result.stdout
    assert (project / "keep.txt").read_text() == "alive"


def test_a_memory_bomb_ends_as_memory(sandbox: Sandbox) -> None:
    result = run(sandbox, """
hog = []
while True:
    hog.append(bytearray(64 * 1024 * 1024))
""")
    assert result.status == "memory", (result.status, result.detail)
    assert result.module_error is not None and result.module_error.type == "MemoryError"


def test_one_huge_allocation_is_refused(sandbox: Sandbox) -> None:
    result = run(sandbox, "blob = bytearray(8 * 1024 ** 3)\n")
    assert result.status == "memory"


def test_a_cpu_loop_is_killed_at_the_wall_clock_limit(sandbox: Sandbox) -> None:
    started = time.monotonic()
    result = run(sandbox, '''
def spin():
    """
    >>> spin()
    """
    while True:
        pass
''', timeout=1.5)
    elapsed = time.monotonic() - started
    assert result.status == "timeout"
    assert "spin()" in result.detail and "line 4" in result.detail, result.detail
    assert elapsed < 1.5 + 10  # killed, not left to spin (a generous bound: this is not a speed test)


# bwrap-user's cap is the user's processes when the job starts + 32 (docs/sandbox.md): another test's
# processes of the same user ending meanwhile let one more child through.
@pytest.mark.alone
def test_a_fork_bomb_hits_the_process_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os, time
children = 0
try:
    for _ in range(10_000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError as error:
    print("STOPPED", children, error.errno)
""", timeout=20)
    assert result.status == "ok", result.detail
    word, count, errno = result.stdout.split()
    assert word == "STOPPED" and errno == "11"  # EAGAIN
    assert int(count) <= DEFAULT_LIMITS.processes


def test_the_sleeping_children_of_a_fork_bomb_are_gone_for_the_next_job(sandbox: Sandbox) -> None:
    first = run(sandbox, """
import os, time
for _ in range(5):
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
print(os.getpid())
""")
    assert first.status == "ok"
    second = run(sandbox, """
import os
def parent(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()[1])
mine = os.getpid()
sandbox_own = {1, mine, os.getppid(), parent(os.getppid())}  # init, this job, the zygote, the worker
alive = []
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) not in sandbox_own:
        try:
            state = open(f"/proc/{entry}/stat").read().split(") ")[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(entry)
print(alive)
""")
    assert second.stdout.strip() == "[]", second.stdout


def test_huge_stdout_is_capped(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import sys
chunk = "x" * 1_000_000
for _ in range(200):
    sys.stdout.write(chunk)
""", timeout=20, output_limit=4096)
    assert result.output_truncated
    assert 0 < len(result.stdout.encode()) <= 4096
    assert result.status == "ok", result.detail


def test_huge_stderr_is_capped_even_when_it_never_stops(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import sys
while True:
    sys.stderr.write("e" * 65536)
""", timeout=2, output_limit=1000)
    assert result.status == "timeout"
    assert result.output_truncated
    assert len(result.stderr.encode()) <= 1000


def test_deep_recursion_is_a_reported_recursion_error(sandbox: Sandbox) -> None:
    result = run(sandbox, '''
def down(n):
    """
    >>> down(0)
    0
    """
    return down(n + 1)
''')
    failure = result.functions[0].failures[0]
    assert failure.exception is not None and failure.exception.type == "RecursionError"
    assert failure.exception.line == 7


def test_a_c_stack_overflow_is_killed_by_sigsegv(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import sys
sys.setrecursionlimit(10 ** 8)
nested = []
for _ in range(200_000):
    nested = [nested]
repr(nested)
""", timeout=20)
    assert result.status == "killed", (result.status, result.detail)
    assert "SIGSEGV" in result.detail, result.detail


def test_a_daemonised_child_does_not_outlive_the_job(sandbox: Sandbox) -> None:
    first = run(sandbox, """
import os, time
read, write = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(write, str(os.getpid()).encode())
        while True:
            time.sleep(0.05)
            open("/tmp/daemon-was-here", "a").write(".")
    os._exit(0)
print(os.read(read, 32).decode())
""")
    daemon = first.stdout.strip()
    assert daemon.isdigit(), first
    second = run(sandbox, f"""
import os, time
time.sleep(0.3)
print(os.path.exists("/proc/{daemon}"), os.path.exists("/tmp/daemon-was-here"))
""")
    assert second.stdout.split() == ["False", "False"]


def test_killing_its_parent_kills_only_the_worker_which_is_replaced(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
import time
time.sleep(30)
""")
    assert result.status == "killed", result.detail
    assert "replaced" in result.detail


def test_killing_pid_1_changes_nothing(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os, signal
for sig in (signal.SIGKILL, signal.SIGTERM):
    try:
        os.kill(1, sig)
        print("sent")
    except OSError as error:
        print(type(error).__name__)
print("still here")
""")
    assert result.status == "ok"
    assert result.stdout.splitlines()[-1] == "still here"


def test_stopping_the_worker_is_a_timeout_and_the_worker_is_replaced(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os, signal
os.kill(os.getppid(), signal.SIGSTOP)
""", timeout=1)
    assert result.status == "timeout"
    assert "replaced" in result.detail


def test_proc_shows_no_host_process_and_no_worker_memory(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os
names = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            names.append(open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\\0", b" ").decode()[:60])
        except OSError:
            pass
print(len(names))
print("|".join(names))
parent = os.getppid()
worker = int(open(f"/proc/{parent}/stat").read().rsplit(") ", 1)[1].split()[1])
for path in [f"/proc/{pid}/{what}" for pid in (parent, worker) for what in ("environ", "mem", "fd/0")]:
    try:
        open(path, "rb").read(64)
        print("READ", path)
    except OSError as error:
        print("denied")
""")
    lines = result.stdout.splitlines()
    assert int(lines[0]) <= 4, lines  # init, the worker, its zygote (this job's parent), this job
    assert "pytest" not in lines[1] and "dockerd" not in lines[1]
    # neither the worker nor the zygote is dumpable: no peeking at their fds or memory
    assert lines[2:] == ["denied"] * 6, lines


def test_a_fake_api_key_in_the_callers_environment_is_not_visible(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-pycapsule-test-leak-0000")
    result = run(sandbox, """
import os
print(dict(os.environ))
for path in ("/proc/self/environ", "/proc/1/environ"):
    try:
        print(open(path, "rb").read())
    except OSError:
        pass
""", project_root=tmp_path)  # a fresh worker, started while the key is set
    assert "sk-pycapsule-test-leak" not in result.stdout
    assert "OPENAI_API_KEY" not in result.stdout


def test_os_exit_before_reporting_is_killed_with_its_status(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os\nos._exit(3)\n")
    assert result.status == "killed"
    assert "status 3" in result.detail


def test_a_segfault_is_killed_by_sigsegv(sandbox: Sandbox) -> None:
    result = run(sandbox, "import ctypes\nctypes.string_at(0)\n")
    assert result.status == "killed"
    assert "SIGSEGV" in result.detail


def test_reading_stdin_gets_end_of_file_at_once(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import sys
print(repr(sys.stdin.read()))
try:
    input()
except EOFError:
    print("EOF")
""", timeout=5)
    assert result.status == "ok"  # a blocked read would have ended as a timeout
    assert result.stdout.split() == ["''", "EOF"]


def test_threads_that_never_end_do_not_hold_the_job(sandbox: Sandbox) -> None:
    result = run(sandbox, '''
import threading, time
threading.Thread(target=lambda: time.sleep(3600)).start()

def f():
    """
    >>> f()
    2
    """
    return 2
''', timeout=10)
    assert result.passed  # a job held open by the thread would have ended as a timeout


def test_files_left_in_tmp_do_not_reach_the_next_job(sandbox: Sandbox) -> None:
    run(sandbox, """
import os, tempfile
open("/tmp/left-behind", "w").write("x")
open("left-in-work", "w").write("x")
os.makedirs("locked/inner")
os.chmod("locked", 0)
""")
    result = run(sandbox, """
import os
print(os.path.exists("/tmp/left-behind"), os.path.exists("left-in-work"), os.path.exists("locked"))
""")
    assert result.stdout.split() == ["False", "False", "False"]


def test_a_huge_file_hits_the_file_size_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, """
try:
    with open("big.bin", "wb") as handle:
        for _ in range(200):
            handle.write(b"\\0" * 1024 * 1024)
    print("WROTE 200 MiB")
except OSError as error:
    print("STOPPED", error.errno)
""")
    assert result.stdout.split()[0] == "STOPPED", result.stdout
    assert result.stdout.split()[1] in ("27", "28")  # EFBIG or ENOSPC


def test_no_devices_beyond_the_harmless_ones(sandbox: Sandbox) -> None:
    result = run(sandbox, """
import os
for path in ("/dev/mem", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/kvm"):
    try:
        open(path, "rb").read(1)
        print("OPENED", path)
    except OSError:
        pass
print(os.getuid() != 0)
""")
    assert "OPENED" not in result.stdout
    assert result.stdout.strip() == "True"


def test_many_processes_together_cannot_exceed_the_sandbox_memory(sandbox: Sandbox) -> None:
    # Each child stays under the per-process limit; only a limit on the whole sandbox stops all of them.
    # What must hold is the memory held at once: a child counts once it has said its block is filled and
    # while it is still alive (one the limit's OOM killer ended holds nothing; one still filling its block
    # on a loaded machine holds only part of it). The job watches until every child has done either.
    per_child = 300 * 1024 * 1024
    result = run(sandbox, f"""
import os, time
read_end, write_end = os.pipe()
children = []
for _ in range(8):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray({per_child})
        except MemoryError:
            os._exit(1)
        os.write(write_end, b"%d\\n" % os.getpid())
        time.sleep(40)
        os._exit(0)
    children.append(pid)
os.close(write_end)
os.set_blocking(read_end, False)
filled, ended, most, started = set(), set(), 0, time.monotonic()
# once every child has filled its block or ended, no more memory can come: the most is known
while len(filled | ended) < len(children) and time.monotonic() - started < 12:
    time.sleep(0.2)
    try:
        filled |= {{int(line) for line in os.read(read_end, 4096).split()}}
    except BlockingIOError:
        pass
    ended |= {{pid for pid in set(children) - ended if os.waitpid(pid, os.WNOHANG) != (0, 0)}}
    most = max(most, len(filled - ended))
print(most)
""", timeout=30)
    assert result.status == "ok", (result.status, result.detail)
    held = int(result.stdout)
    assert held * per_child < DEFAULT_LIMITS.sandbox_memory_bytes, held
    assert held >= 1, "not even one child could hold its block: the test proves nothing"


def test_new_user_namespaces_and_the_kernel_keyring_are_refused(sandbox: Sandbox) -> None:
    keyctl = ARCHES[platform.machine()]["refused"]["keyctl"]
    result = run(sandbox, f"""
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000
print("userns", "created" if libc.unshare(CLONE_NEWUSER) == 0 else "refused")
KEYCTL_JOIN_SESSION_KEYRING, SYS_keyctl = 1, {keyctl}
print("keyring", "joined" if libc.syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, None) >= 0 else "refused")
done = []
thread = threading.Thread(target=lambda: done.append(1))
thread.start()
thread.join()
print("threads", "work" if done else "broken")
""")
    lines = result.stdout.splitlines()
    assert lines == ["userns refused", "keyring refused", "threads work"], result.stdout


def test_a_job_the_whole_sandbox_limit_kills_is_reported_as_memory(sandbox: Sandbox) -> None:
    # The job is the largest process when the sandbox fills up, so it is the one the kernel kills.
    result = run(sandbox, f"""
import os, time
read, write = os.pipe()
for _ in range(2):
    if os.fork() == 0:
        block = bytearray({200 * 1024 * 1024})
        os.write(write, b"+")
        time.sleep(30)
        os._exit(0)
os.read(read, 1), os.read(read, 1)
hog = bytearray({700 * 1024 * 1024})  # under the per-process limit; with the children, over the sandbox's
print("survived")
""", timeout=20)
    assert "survived" not in result.stdout
    assert result.status == "memory", (result.status, result.detail)
