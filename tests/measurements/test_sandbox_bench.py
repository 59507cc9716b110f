"""`python3 -m measurements sandbox`: what it prints (speed itself is measured by the tool, never asserted
here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from measurements.__main__ import main
from tests.measurements.conftest import measurements


def test_it_prints_median_and_p90_for_warm_and_cold_and_their_ratio() -> None:
    done = measurements("sandbox", "--backend", "bwrap", "--jobs", "3")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("bwrap ")]
    modes = {row[1]: row for row in rows if len(row) == 6}
    assert set(modes) == {"warm", "warm+gap", "cold"}
    for row in modes.values():
        jobs, median, p90 = int(row[2]), float(row[3]), float(row[4])
        assert jobs >= 3 and 0 < median <= p90
        assert row[5].endswith("x")
    assert any("target" in line for line in done.stdout.splitlines())


def test_with_a_project_it_also_times_warm_jobs_that_have_it_as_their_root(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "data").mkdir(mode=0o755)
    done = measurements("sandbox", "--backend", "bwrap", "--jobs", "3", "--project", str(tmp_path))
    assert done.returncode == 0, done.stderr
    modes = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("bwrap ")]
    assert "warm+proj" in modes
    assert "warm+proj: " in done.stdout and f"x the time of warm (project {tmp_path})" in done.stdout


def test_it_names_a_backend_that_cannot_run_and_goes_on() -> None:
    done = measurements("sandbox", "--backend", "nonesuch", "--backend", "bwrap", "--jobs", "3")
    assert done.returncode == 0
    assert "nonesuch" in done.stdout and "skipped: there is no sandbox backend named" in done.stdout


@pytest.mark.docker
def test_the_docker_bench_compares_with_one_plain_docker_run_per_job() -> None:
    if not os.environ.get("DOCKER_HOST"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run a Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
        pytest.skip("no private Docker engine (tests/sandbox/setup.sh exports DOCKER_HOST)")
    done = measurements("sandbox", "--backend", "docker", "--jobs", "3")
    assert done.returncode == 0, done.stderr
    modes = [line[19:29].strip() for line in done.stdout.splitlines() if line.startswith("docker ")]
    assert {"warm", "warm+gap", "cold", "docker run"} <= set(modes), done.stdout
    assert "faster than docker run" in done.stdout


def test_it_refuses_zero_jobs_in_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--jobs", "0"]) == 2
    assert capsys.readouterr().err.strip() == "measurements sandbox: --jobs must be at least 1"
