"""`python3 -m measurements lsp`: request latency against a no-op round trip and save-to-diagnostics time
against a direct check, through a real client (speed itself is never asserted here: a missed p95
target exits 1)."""

from __future__ import annotations

import re

import pytest

from measurements.__main__ import main
from tests.measurements.conftest import measurements


def test_it_times_every_request_and_every_kind_of_save_against_its_baselines() -> None:
    done = measurements("lsp", "--lines", "50", "--functions", "2")
    assert done.returncode in (0, 1), done.stderr
    out = done.stdout
    requests = ("round trip (no-op command)", "code action", "code action after an edit",
                "hover (with history)", "hover behind a run's start", "a run's start answered",
                "no-op beside the starts",
                "no-op behind a run's start")
    for label in requests:
        assert re.search(rf"^  {re.escape(label)} +[\d.]+ms +[\d.]+ms .* [\d.]+x$", out, re.MULTILINE), label
    assert "2 doctest functions (2 failures published)" in out
    saves = ("first open", "cold (every function changed)", "one function changed",
             "cached (saved unchanged)", "direct Engine.check, same module")
    for label in saves:
        assert re.search(rf"^  {re.escape(label)}.* [\d.]+ ms", out, re.MULTILINE), label
    assert ("verdict: p95 targets met" in out) == (done.returncode == 0)


def test_it_refuses_a_module_too_small_to_measure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lsp", "--lines", "10"]) == 2
    assert capsys.readouterr().err.strip() == \
        "measurements lsp: --lines must be at least 50 and --functions at least 1"
