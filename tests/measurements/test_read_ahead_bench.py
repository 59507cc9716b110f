"""`python3 -m measurements read_ahead`: a stub's first request read fresh, then read ahead and asked again,
through the product's own client (on the tiny random model: the seconds mean nothing; what each request
read from the cache, and whether the answers are the same, do)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from measurements.read_ahead import bench, format_table
from tests.measurements.conftest import measurements

STUB = '''

def shorten_each(lines, width):
    """Shorten every line to fit in `width` columns.

    >>> shorten_each(["Hello  world!"], 8)
    ['Hello']
    """
'''


def test_a_long_prompt_read_ahead_gives_the_same_answer_reading_only_its_last_batch(
        tiny_env: Path, tmp_path: Path) -> None:
    module = tmp_path / "wrapping.py"
    module.write_text(Path(textwrap.__file__).read_text() + STUB)
    [pair] = bench("tiny", module, realcode=0)
    assert pair.name == "shorten_each"
    assert pair.fresh.cached_tokens == 0 and pair.fresh.read_tokens == pair.fresh.prompt_tokens
    assert pair.held >= 512 and pair.held % 512 == 0
    assert pair.read_ahead.cached_tokens == pair.held
    assert pair.read_ahead.read_tokens == pair.fresh.prompt_tokens - pair.held < 512
    assert pair.read_ahead.text == pair.fresh.text
    table = format_table("tiny", [pair]).splitlines()
    assert [row.split()[0] for row in table[2:4]] == ["fresh", "read"]
    assert table[3].split()[-3:] == ["1", "of", "1"]


def test_a_file_without_stubs_is_a_usage_error(tmp_path: Path) -> None:
    module = tmp_path / "done.py"
    module.write_text("def f():\n    return 1\n")
    assert measurements("read_ahead", str(module), "--size", "0.5b").returncode == 2
