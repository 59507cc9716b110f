"""`pycapsule sandbox doctor | bench`: what they print (speed itself is measured by the bench, never
asserted here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def sandbox_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", "sandbox", *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))


def test_doctor_says_which_backends_work_and_why_not() -> None:
    done = sandbox_command("doctor")
    assert done.returncode == 0
    lines = {line[:18].strip(): line for line in done.stdout.splitlines()}
    assert lines["bwrap"].endswith("works here")
    assert set(lines) == {"bwrap", "docker", "unsafe-subprocess", "bwrap limits"}


def test_doctor_says_which_whole_sandbox_limit_is_in_force() -> None:
    done = sandbox_command("doctor")
    [line] = [line for line in done.stdout.splitlines() if line.startswith("bwrap limits")]
    kind = line[18:].split(":")[0].strip()
    # root gets a cgroup of its own where cgroups can be made; an ordinary user without a systemd
    # session, the watchdog (the bwrap-user tests run the hostile suite under it)
    expected = "cgroup" if os.geteuid() == 0 and os.access("/sys/fs/cgroup", os.W_OK) else None
    assert kind in ("cgroup", "user-scope", "watchdog") and (expected is None or kind == expected), line


def test_bench_prints_median_and_p90_for_warm_and_cold_and_their_ratio() -> None:
    done = sandbox_command("bench", "--backend", "bwrap", "--jobs", "3")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("bwrap ")]
    modes = {row[1]: row for row in rows if len(row) == 6}
    assert set(modes) == {"warm", "warm+gap", "cold"}
    for row in modes.values():
        jobs, median, p90 = int(row[2]), float(row[3]), float(row[4])
        assert jobs >= 3 and 0 < median <= p90
        assert row[5].endswith("x")
    assert any("target" in line for line in done.stdout.splitlines())


def test_bench_names_a_backend_that_cannot_run_and_goes_on() -> None:
    done = sandbox_command("bench", "--backend", "nonesuch", "--backend", "bwrap", "--jobs", "3")
    assert done.returncode == 0
    assert "nonesuch" in done.stdout and "skipped: there is no sandbox backend named" in done.stdout


@pytest.mark.docker
def test_the_docker_bench_compares_with_one_plain_docker_run_per_job() -> None:
    if not os.environ.get("DOCKER_HOST"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run a Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
        pytest.skip("no private Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
    done = sandbox_command("bench", "--backend", "docker", "--jobs", "3")
    assert done.returncode == 0, done.stderr
    modes = [line[19:29].strip() for line in done.stdout.splitlines() if line.startswith("docker ")]
    assert {"warm", "warm+gap", "cold", "docker run"} <= set(modes), done.stdout
    assert "faster than docker run" in done.stdout


def test_bench_refuses_zero_jobs_in_one_sentence() -> None:
    done = sandbox_command("bench", "--jobs", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == "pycapsule sandbox bench: --jobs must be at least 1"
