"""`python3 -m measurements loop`: the loop's overhead per attempt against its baseline, half the attempts
failing (speed itself is never asserted here)."""

from __future__ import annotations

from tests.measurements.conftest import measurements


def test_it_reports_the_overhead_against_its_baseline() -> None:
    done = measurements("loop", "--attempts", "4", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "4 attempts (2 failing, condensed)" in done.stdout
    for label in ("loop overhead per attempt", "baseline: bare sandbox.run", "ratio loop / baseline"):
        assert label in done.stdout
