"""`python3 -m measurements strength`: the mutation check's time per passing body of a published run, against
one run of the same body's examples (speed itself is never asserted here)."""

from __future__ import annotations

from tests.measurements.conftest import measurements


def test_it_reports_the_check_against_its_baseline_with_the_mutants_per_body() -> None:
    done = measurements("strength", "--bodies", "3", timeout=180)
    assert done.returncode == 0, done.stderr
    assert "3 passing bodies of humaneval-selfdebug-" in done.stdout
    for label in ("mutation check per body", "baseline: the examples run once", "ratio check / baseline",
                  "mutants judged per body", "target: p50 <= 1 s and p95 <= 3 s per body"):
        assert label in done.stdout


def test_missing_records_are_one_sentence() -> None:
    done = measurements("strength", "--records", "no/such/run.jsonl.gz", timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "measurements strength: no records at no/such/run.jsonl.gz"
