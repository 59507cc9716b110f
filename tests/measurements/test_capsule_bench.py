"""`python3 -m measurements capsule`: each capsule operation as a ratio to ast.parse of the same module."""

from __future__ import annotations

import re

from tests.measurements.conftest import measurements


def test_it_prints_every_operation_as_a_ratio_to_the_parse() -> None:
    done = measurements("capsule", "--lines", "300", "--functions", "6", "--rounds", "2", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "6 functions; 2 rounds" in done.stdout
    assert re.search(r"^baseline ast.parse: median [\d.]+ ms$", done.stdout, re.MULTILINE)
    ratios = re.findall(r"^(.+?) +median +([\d.]+)x ast.parse \(~[\d.]+ ms\)$", done.stdout, re.MULTILINE)
    assert [name for name, _ in ratios] == [
        "read_capsules (all functions)", "capsule_at (code action)", "extract_code + strip_example_calls",
        "splice", "module_context"]
