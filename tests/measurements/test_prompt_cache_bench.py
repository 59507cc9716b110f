"""`python3 -m measurements prompt_cache`: the product's restart after one failure, asked without and with the
prompt cache right after attempt 1, through the product's own client (on the tiny random model: the
seconds mean nothing; what each retry read from the cache, and the comparison, do)."""

from __future__ import annotations

from pathlib import Path

from measurements.prompt_cache import bench, format_table
from measurements.stubs import SAMPLE
from tests.measurements.conftest import measurements


def test_the_cached_retry_reads_only_what_the_restart_adds_to_attempt_1(tiny_env: Path) -> None:
    pairs = bench("tiny", SAMPLE, realcode=0)
    assert [p.name for p in pairs] == ["is_palindrome", "run_length", "Temperature.fahrenheit"]
    for pair in pairs:
        assert pair.without.cached_tokens == 0 and pair.without.read_tokens == pair.without.prompt_tokens
        assert pair.cached.prompt_tokens == pair.without.prompt_tokens
        assert pair.cached.read_tokens < pair.without.prompt_tokens / 2, pair
    table = format_table("tiny", pairs).splitlines()
    assert table[0].split() == ["retry", "s", "to", "1st", "token", "x", "off", "s", "/", "retry", "x", "off",
                                "prompt", "tokens", "read", "same", "answers"]
    assert all(0 < p.cached.first_token <= p.cached.seconds for p in pairs)
    assert [row.split()[0] for row in table[2:4]] == ["cache", "cached"]
    assert table[3].split()[-3:-1] == [str(sum(p.without.text == p.cached.text for p in pairs)), "of"]


def test_a_file_without_stubs_is_a_usage_error(tmp_path: Path) -> None:
    module = tmp_path / "done.py"
    module.write_text("def f():\n    return 1\n")
    assert measurements("prompt_cache", str(module), "--size", "0.5b").returncode == 2
