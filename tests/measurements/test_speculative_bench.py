"""`python3 -m measurements speculative`: the product's first requests served without and with speculative
decoding, timed and compared answer by answer (on the tiny random model, which also drafts for itself: the
figures mean nothing, their presence and the comparison do)."""

from __future__ import annotations

from pathlib import Path

from measurements.speculative import bench_configuration, format_table, requests_for
from measurements.stubs import SAMPLE
from tests.measurements.conftest import measurements


def test_the_requests_are_the_product_s_first_request_for_each_stub_of_the_file() -> None:
    requests = requests_for(SAMPLE, humaneval=0)
    assert len(requests) == 3
    assert all(messages[-1]["role"] == "user" for messages in requests)
    assert "def is_palindrome(text: str) -> bool:" in requests[0][-1]["content"]


def test_each_configuration_answers_every_request_and_is_compared_with_no_speculation(tiny_env: Path) -> None:
    requests = requests_for(SAMPLE, humaneval=0)[:2]
    results = [bench_configuration("tiny", name, requests, 24, draft_size="tiny")
               for name in ("off", "ngram", "draft")]
    assert all(len(r.answers) == 2 and all(a.seconds > 0 and a.completion_tokens > 0 for a in r.answers)
               for r in results)
    table = format_table("tiny", results, threads=2).splitlines()
    assert results[0].drafted == 0 and results[2].drafted > 0, "the draft model drafts; nothing without it"
    assert table[0].split() == ["speculative", "s", "/", "answer", "x", "off", "tok/s", "drafted", "accepted",
                                "same", "answers"]
    assert [row.split()[0] for row in table[2:5]] == ["off", "ngram", "draft"]
    assert table[2].split()[-3:] == ["2", "of", "2"]


def test_a_file_without_stubs_is_a_usage_error(tmp_path: Path) -> None:
    module = tmp_path / "done.py"
    module.write_text("def f():\n    return 1\n")
    assert measurements("speculative", str(module)).returncode == 2
