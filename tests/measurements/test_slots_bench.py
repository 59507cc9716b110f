"""`python3 -m measurements slots`: k answers at once from llama.cpp's parallel slots against one (on the tiny
random model: the figures mean nothing, their presence and the table's shape do)."""

from __future__ import annotations

from pathlib import Path

from measurements.slots import bench_slots, format_table
from tests.measurements.conftest import measurements

PROMPTS = ("def f():\n    pass\n", "def g():\n    pass\n")


def test_k_answers_at_once_are_timed_as_one_batch_and_compared_with_one(tiny_env: Path) -> None:
    one, two = (bench_slots("tiny", k, rounds=1, max_tokens=16, prompts=PROMPTS) for k in (1, 2))
    assert len(one.batches) == len(two.batches) == 2
    assert all(b.seconds > 0 and b.completion_tokens > 0 for b in one.batches + two.batches)
    pairs = zip(one.batches, two.batches, strict=True)
    assert all(b.completion_tokens > a.completion_tokens // 2 for a, b in pairs), "k answers per batch"
    table = format_table("tiny", [one, two], threads=2, load=0.5).splitlines()
    assert table[0].split() == ["at", "once", "batch", "s", "x", "one", "s", "/", "answer", "tok/s"]
    assert [row.split()[0] for row in table[2:4]] == ["1", "2"]
    assert table[2].split()[2] == "1.00"


def test_a_count_below_one_is_a_usage_error() -> None:
    assert measurements("slots", "--parallel", "0").returncode == 2
