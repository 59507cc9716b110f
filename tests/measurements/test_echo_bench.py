"""`python3 -m measurements echo`: a stub's first request written whole, then asked again with the head's
rest given, through the product's own client (on the tiny random model, which never repeats the head: the
seconds mean nothing; that both answers are asked and an answer not given the head is the same, do)."""

from __future__ import annotations

from pathlib import Path

from measurements.echo import bench, format_table
from tests.measurements.conftest import measurements
from tests.measurements.test_read_ahead_bench import STUB


def test_an_answer_that_does_not_repeat_the_head_is_the_same_either_way(
        tiny_env: Path, tmp_path: Path) -> None:
    module = tmp_path / "wrapping.py"
    module.write_text(STUB)
    [pair] = bench("tiny", module, realcode=0)
    assert pair.name == "shorten_each" and not pair.given
    assert pair.given_the_head.text == pair.written_whole.text
    assert pair.written_whole.written > 0
    table = format_table("tiny", [pair]).splitlines()
    assert [row.split()[0] for row in table[2:4]] == ["written", "head"]
    assert table[3].split()[-3:] == ["1", "of", "1"]


def test_a_file_without_stubs_is_a_usage_error(tmp_path: Path) -> None:
    module = tmp_path / "done.py"
    module.write_text("def f():\n    return 1\n")
    assert measurements("echo", str(module), "--size", "0.5b").returncode == 2
