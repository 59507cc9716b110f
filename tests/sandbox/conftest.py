"""Sandboxes for the tests: one warm sandbox per backend per session.

A backend that cannot run here is skipped with its reason on a developer machine, and FAILS in CI
(CI=true), where every backend must work.

`bwrap-user` is bwrap launched as an ordinary user (the account tests/sandbox/setup.sh creates,
$PYCAPSULE_TEST_USER): run as root, the suite thereby covers both of bwrap's set-ups, privileged
and unprivileged. Its tests get a `tmp_path` that account can read.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Job, RunResult, Sandbox, SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox

TEST_USER = os.environ.get("PYCAPSULE_TEST_USER", "pycapsule-ci")
CONTAINED = ["bwrap", "bwrap-user", pytest.param("docker", marks=pytest.mark.docker)]
EVERY_BACKEND = [*CONTAINED, "unsafe-subprocess"]

TRIVIAL = '''
def one():
    """
    >>> one()
    1
    """
    return 1
'''


def trivial_job_passes(sandbox: Sandbox) -> RunResult:
    return sandbox.run(Job(source=TRIVIAL, doctest_targets=("one",), timeout=20))


def python_for(user: pwd.struct_passwd) -> str:
    """This interpreter when `user` can run it (a Python under /root cannot be), else the system's."""
    for python in (sys.executable, "/usr/bin/python3"):
        # through a shell: setpriv itself may still hold root's capabilities while it looks the path up
        probe = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--",
                 "/bin/sh", "-c", 'test -x "$0"', python]
        if subprocess.run(probe, capture_output=True, env={"PATH": os.defpath}).returncode == 0:
            return python
    raise SandboxUnavailable(f"{user.pw_name} can run neither {sys.executable} nor /usr/bin/python3")


def open_as_ordinary_user() -> Sandbox:
    from pycapsule.sandbox.bwrap import BwrapSandbox

    if os.geteuid() != 0:
        pytest.skip("already an ordinary user: plain `bwrap` is the unprivileged set-up")
    try:
        user = pwd.getpwnam(TEST_USER)
    except KeyError:
        raise SandboxUnavailable(f"there is no user {TEST_USER}; source tests/sandbox/setup.sh") from None
    sandbox = BwrapSandbox(launch_as=TEST_USER, python=python_for(user))
    sandbox.start()
    return sandbox


def open_or_skip(name: str) -> Sandbox:
    try:
        return open_as_ordinary_user() if name == "bwrap-user" else open_sandbox(name)
    except SandboxUnavailable as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} must work in CI: {error}")
        pytest.skip(f"{name} cannot run here: {error}")


@pytest.fixture(scope="session")
def sandboxes() -> Iterator[dict[str, Sandbox]]:
    opened: dict[str, Sandbox] = {}
    yield opened
    for sandbox in opened.values():
        sandbox.close()


@pytest.fixture
def sandbox(request: pytest.FixtureRequest, sandboxes: dict[str, Sandbox]) -> Iterator[Sandbox]:
    """The warm sandbox of the parametrized backend; after the test it must still run a job."""
    name = request.param
    if name not in sandboxes:
        sandboxes[name] = open_or_skip(name)
    yield sandboxes[name]
    after = trivial_job_passes(sandboxes[name])
    assert after.passed, f"the {name} sandbox did not recover: {after.status} {after.detail}"


def run(sandbox: Sandbox, source: str, **job: object) -> RunResult:
    job.setdefault("timeout", 10.0)
    return sandbox.run(Job(source=source, **job))  # type: ignore[arg-type]


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """pytest's own, except for `bwrap-user`: a folder that account can read (pytest's are 0700)."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or callspec.params.get("sandbox") != "bwrap-user":
        yield tmp_path
        return
    # not under /tmp: the sandbox has its own /tmp, where the parents of a bind are its own to write
    readable = Path(tempfile.mkdtemp(prefix="pycapsule-user-test-", dir="/var/tmp"))
    readable.chmod(0o755)
    yield readable
    shutil.rmtree(readable, ignore_errors=True)


@contextlib.contextmanager
def accepting(server: socket.socket) -> Iterator[list[object]]:
    """Accept on a listening `server` while the block runs; the list collects what it accepted."""
    server.settimeout(0.5)
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        yield accepted
    finally:
        thread.join()
        server.close()
