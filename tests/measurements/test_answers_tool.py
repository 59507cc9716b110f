"""`python3 -m measurements answers`: what a run's answers are made of, the body pycapsule keeps against the
signature and docstring it throws away and the rest."""

from __future__ import annotations

import json
from pathlib import Path

from measurements.answers import split_answer
from tests.measurements.conftest import measurements

HEADER = 'def add(a, b):\n    """Add.\n\n    >>> add(1, 2)\n    3\n    """\n'
BODY = "    return a + b\n"


def test_an_answer_splits_into_the_body_the_repeated_header_and_the_rest() -> None:
    parts = split_answer(f"import math\n\n\n{HEADER}{BODY}\nprint(add(1, 2))\n", "add")
    assert parts["body"] == len(BODY)
    assert parts["signature and docstring"] == len(HEADER)
    assert parts["other code"] == len("import math\n\n\n") + len("\nprint(add(1, 2))\n")


def test_a_body_without_a_docstring_is_all_body_after_the_header() -> None:
    parts = split_answer(f"@cache\ndef add(a, b):\n{BODY}", "add")
    assert parts["signature and docstring"] == len("@cache\ndef add(a, b):\n")
    assert parts["body"] == len(BODY)


def test_an_answer_without_the_function_or_that_does_not_parse_is_all_other_code() -> None:
    assert split_answer(f"def other():\n{BODY}", "add") == {"other code": len(f"def other():\n{BODY}")}
    assert split_answer("def add(:\n", "add") == {"other code": len("def add(:\n")}


def test_it_reads_a_runs_records_and_estimates_the_tokens_not_spent_on_the_body(tmp_path: Path) -> None:
    manifest = tmp_path / "humaneval-selfdebug-0000000000.json"
    manifest.write_text(json.dumps({"model_label": "some-coder", "config": {
        "dataset": "humaneval", "generation": {"mode": "selfdebug"}}}))
    header = 'def has_close_elements(numbers, threshold):\n    """Close?"""\n'
    body = "    return any(abs(a - b) < threshold for a in numbers for b in numbers if a is not b)\n"
    record = {"task_id": "HumanEval/0", "prompt_key": "k", "status": "passed", "codes": [header + body],
              "attempt_tokens": [[100, 40]]}
    manifest.with_suffix(".jsonl").write_text(json.dumps(record) + "\n")

    done = measurements("answers", str(manifest))

    assert done.returncode == 0, done.stderr
    share = len(body) / len(header + body)
    row = (f"| some-coder humaneval selfdebug | 1 | {100 * share:.0f} % | {100 * (1 - share):.0f} % | 0 % "
           f"| {100 * share:.0f} % | 40 | {40 * (1 - share):.0f} |")
    assert row in done.stdout.splitlines()


def test_a_file_that_is_not_a_manifest_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[]")
    done = measurements("answers", str(tmp_path / "x.json"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"measurements answers: {tmp_path / 'x.json'} is not a bench manifest"
