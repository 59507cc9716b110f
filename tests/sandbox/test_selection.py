"""Choosing a backend: by name, automatically, and a clear sentence when none can run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pycapsule.sandbox.api import Job, SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox

from tests.sandbox.conftest import open_or_skip


def test_an_unknown_backend_name_lists_the_real_ones() -> None:
    with pytest.raises(SandboxUnavailable, match="bwrap, docker, unsafe-subprocess"):
        open_sandbox("chroot")


def test_auto_selection_prefers_bwrap_and_never_picks_unsafe() -> None:
    sandbox = open_sandbox(None)
    try:
        assert sandbox.name == "bwrap"
    finally:
        sandbox.close()


def test_with_no_backend_available_the_error_says_what_to_install() -> None:
    probe = (
        "from pycapsule.sandbox.select import open_sandbox\n"
        "from pycapsule.sandbox.api import SandboxUnavailable\n"
        "try:\n    open_sandbox(None)\nexcept SandboxUnavailable as error:\n    print(error)\n"
    )
    env = {**os.environ, "PATH": "/nonexistent", "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    message = done.stdout.strip()
    assert "no sandbox backend works here" in message
    assert "apt-get install bubblewrap" in message
    assert "DOCKER_HOST" in message
    assert len(message.splitlines()) == 1


@pytest.mark.docker
def test_a_missing_docker_image_says_how_to_build_it() -> None:
    if not os.environ.get("DOCKER_HOST"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run a Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
        pytest.skip("no private Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
    env = {**os.environ, "PYCAPSULE_DOCKER_IMAGE": "pycapsule-sandbox:does-not-exist"}
    probe = (
        "from pycapsule.sandbox.select import open_sandbox\n"
        "from pycapsule.sandbox.api import SandboxUnavailable\n"
        "try:\n    open_sandbox('docker')\nexcept SandboxUnavailable as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert "pycapsule sandbox build-image" in done.stdout, done.stdout + done.stderr


@pytest.mark.docker
def test_docker_says_on_every_run_that_it_does_not_use_the_projects_interpreter() -> None:
    open_or_skip("docker").close()
    sandbox = open_sandbox("docker", python=sys.executable)
    try:
        result = sandbox.run(Job(source="x = 1\n", doctest_targets=()))
    finally:
        sandbox.close()
    assert result.status == "ok"
    assert any(w.startswith("the docker sandbox runs its image's Python") and sys.executable in w
               for w in result.warnings), result.warnings
