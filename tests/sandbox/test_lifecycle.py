"""The warm worker: fast reuse, a fresh process and module per job, replacement when it dies,
thread safety, and imports from the project and the user's installed packages."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Job, Sandbox

from .conftest import CONTAINED, EVERY_BACKEND, TRIVIAL, run

every_backend = pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)


@every_backend
def test_nothing_leaks_from_one_job_to_the_next(sandbox: Sandbox) -> None:
    run(sandbox, """
import os, sys, json, builtins
counter = 41
os.environ["LEAK"] = "yes"
sys.modules["json"].leaked = True
builtins.leaked = True
sys.path.append("/leaked")
""")
    result = run(sandbox, """
import os, sys, json, builtins
print("counter" in globals(), os.environ.get("LEAK"), hasattr(json, "leaked"),
      hasattr(builtins, "leaked"), "/leaked" in sys.path)
""")
    assert result.stdout.split() == ["False", "None", "False", "False", "False"]


@every_backend
def test_each_job_is_a_new_process(sandbox: Sandbox) -> None:
    first = run(sandbox, "import os\nprint(os.getpid())\n")
    second = run(sandbox, "import os\nprint(os.getpid())\n")
    assert first.stdout != second.stdout


@every_backend
def test_a_dead_worker_is_replaced_for_the_next_job(sandbox: Sandbox) -> None:
    killed = run(sandbox, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
    assert killed.status == "killed"
    again = sandbox.run(Job(source=TRIVIAL, doctest_targets=("one",)))
    assert again.passed


@every_backend
def test_a_cancelled_job_is_killed_at_once_and_the_next_job_runs(sandbox: Sandbox) -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    result = sandbox.run(Job(source="import time\ntime.sleep(60)\n", timeout=60), cancel)
    assert result.status == "cancelled", result
    assert time.monotonic() - started < 10, "the sandbox waited for the job instead of the cancel"
    again = sandbox.run(Job(source=TRIVIAL, doctest_targets=("one",)), cancel=threading.Event())
    assert again.passed, again


@every_backend
def test_a_job_cancelled_before_it_starts_never_runs(sandbox: Sandbox) -> None:
    cancel = threading.Event()
    cancel.set()
    result = sandbox.run(Job(source=TRIVIAL, doctest_targets=("one",)), cancel)
    assert result.status == "cancelled" and not result.passed


@every_backend
def test_jobs_from_many_threads_all_come_back_right(sandbox: Sandbox) -> None:
    results: dict[int, str] = {}

    def job(number: int) -> None:
        results[number] = run(sandbox, f"print({number} * 2)\n").stdout

    threads = [threading.Thread(target=job, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: f"{n * 2}\n" for n in range(8)}


@every_backend
def test_doctests_import_the_users_own_modules_read_only(sandbox: Sandbox, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # the sandbox may run as another uid: the project must be readable by others
    (tmp_path / "helpers.py").write_text("def twice(x):\n    return 2 * x\n")
    source = 'import helpers\n\ndef f(x):\n    """\n    >>> f(3)\n    6\n    """\n'
    source += "    return helpers.twice(x)\n"
    result = run(sandbox, source, doctest_targets=("f",), project_root=tmp_path)
    assert result.passed, (result.status, result.detail, result.module_error)


@every_backend
def test_an_invalid_job_is_reported_not_raised(sandbox: Sandbox) -> None:
    result = sandbox.run(Job(source="x = 1", timeout=0))
    assert result.status == "crashed"
    assert "timeout" in result.detail


@pytest.mark.parametrize("sandbox", ["bwrap", "unsafe-subprocess"], indirect=True)
def test_packages_installed_for_the_user_are_importable(sandbox: Sandbox) -> None:
    result = run(sandbox, "import pytest, docker\nprint(pytest.__name__, docker.__name__)\n")
    assert result.stdout == "pytest docker\n", (result.module_error, result.detail)


@pytest.mark.parametrize("sandbox", CONTAINED, indirect=True)
def test_a_project_only_its_owner_can_read_gets_a_warning_when_the_sandbox_uid_differs(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    tmp_path.chmod(0o700)
    result = run(sandbox, "x = 1\n", project_root=tmp_path)
    if sandbox.name == "bwrap" and os.geteuid() != 0:
        assert result.warnings == ()
    else:
        assert any("not readable by others" in w for w in result.warnings), result.warnings


@pytest.mark.docker
def test_a_container_whose_owner_dies_without_closing_is_removed() -> None:
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run a Docker engine: {error}")
        pytest.skip(f"no Docker engine: {error}")
    # The owner names the container it creates: other tests (in another xdist worker) may create theirs.
    owner_code = (
        "from pycapsule.sandbox.docker import DockerSandbox\n"
        "create = DockerSandbox.create_container\n"
        "def announced(self, settings):\n"
        "    container = create(self, settings)\n"
        "    print(container.id, flush=True)\n"
        "    return container\n"
        "DockerSandbox.create_container = announced\n"
        "from pycapsule.sandbox.select import open_sandbox\n"
        "from pycapsule.sandbox.api import Job\n"
        "sandbox = open_sandbox('docker')\n"
        "print(sandbox.run(Job(source='import socket; print(socket.gethostname())')).stdout, flush=True)\n"
        "import time\ntime.sleep(120)\n"
    )
    mine = {"label": "pycapsule.sandbox=worker"}

    def containers() -> set[str]:
        return {c.id for c in client.containers.list(all=True, filters=mine)}

    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    owners = {owner.stdout.readline().strip()}
    assert owner.stdout.readline().strip() == "sandbox"
    assert owners <= containers()
    owner.kill()
    owner.wait()
    deadline = time.monotonic() + 15
    while owners & containers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not owners & containers()


@every_backend
def test_the_same_worker_serves_job_after_job_also_with_a_project_under_tmp(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    tmp_path.chmod(0o755)
    worker_started = (
        "import os\nprint(open(f'/proc/{os.getppid()}/stat').read().rsplit(')', 1)[1].split()[19])\n"
    )
    starts = {run(sandbox, worker_started, project_root=tmp_path).stdout for _ in range(3)}
    assert len(starts) == 1, starts  # a worker that retired after every job would show new start times
