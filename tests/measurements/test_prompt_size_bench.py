"""`python3 -m measurements prompt_size`: each stub's first request as the loop asks it, once per prompt
variant (how much module context, whether the answer starts with the signature and docstring), through the
product's own client (on the tiny random model: the seconds mean nothing; the prompts' sizes and the
comparison do)."""

from __future__ import annotations

from pathlib import Path

import pytest

from measurements.prompt_size import Variant, bench, format_table
from measurements.stubs import SAMPLE
from tests.measurements.conftest import measurements


def test_each_variant_asks_each_stub_with_its_own_context_and_prefill(tiny_env: Path) -> None:
    variants = [Variant(2000, "embedded"), Variant(0, "never"), Variant(2000, "never")]
    stubs = bench("tiny", SAMPLE, realcode=0, variants=variants)
    assert [s.name for s in stubs] == ["is_palindrome", "run_length", "Temperature.fahrenheit"]
    for stub in stubs:
        prefilled, no_context, whole = stub.answers
        assert no_context.prompt_tokens < whole.prompt_tokens < prefilled.prompt_tokens, stub
        assert all(a.cached_tokens == 0 and 0 < a.first_token <= a.seconds for a in stub.answers), stub
    table = format_table("tiny", stubs, variants).splitlines()
    assert table[0].split()[:6] == ["variant", "s", "to", "1st", "token", "x"]
    assert [row.split()[0] for row in table[2:5]] == ["2000:embedded", "0:never", "2000:never"]
    assert table[2].split()[-1] == "-" and table[3].split()[-2:] == ["of", "3"]


@pytest.mark.parametrize("text", ["2000", "many:never", "2000:sometimes"])
def test_a_variant_is_context_chars_and_an_answer_prefill_value(text: str) -> None:
    with pytest.raises(ValueError, match="CHARS:PREFILL"):
        Variant.parse(text)
    assert Variant.parse("2000:embedded") == Variant(2000, "embedded")


def test_a_malformed_variant_is_a_usage_error() -> None:
    assert measurements("prompt_size", "--variant", "half").returncode == 2
