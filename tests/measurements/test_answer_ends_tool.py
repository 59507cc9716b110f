"""`python3 -m measurements answer_ends`: recorded answers replayed through the answer watch, with what it
would have ended, changed and saved."""

from __future__ import annotations

from pathlib import Path

from pycapsule.bench.records import RecordWriter, TaskRecord

from measurements.answer_ends import function_code
from tests.measurements.conftest import measurements

HEADER = ('def truncate_number(number: float) -> float:\n    """Decimal part.\n    >>> truncate_number(3.5)\n'
          '    0.5\n    """\n')
BODY = "    return number % 1.0\n"
PROSE = "The modulo keeps the decimal part of the number, which is what the docstring asks for.\n" * 30


def record(task_id: str, answer: str, verdict: str, status: str, tokens: int) -> TaskRecord:
    return TaskRecord(task_id=task_id, prompt_key="k", status=status, codes=[answer], verdicts=[verdict],
                      attempt_tokens=[[100, tokens]], attempt_seconds=[1.0], examples_failed=[0],
                      replies={"1": answer}, passed_attempt=1 if verdict == "passed" else None)


def test_the_report_counts_what_the_watch_ends_and_what_the_cut_would_change(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "humaneval-direct-0123456789.jsonl.gz")
    writer.write(record("HumanEval/2", f"```python\n{HEADER}{BODY}```\n{PROSE}", "passed", "passed", 400))
    loop = "".join(f"    if number == {n}:\n        return {n}.5\n" for n in range(100))
    looping = f"```python\ndef below_zero(operations):\n{loop}"
    writer.write(record("HumanEval/3", looping, "failed", "failed", 900))
    writer.close()
    done = measurements("answer_ends", str(tmp_path))
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[2].split(" | ")
    assert row[:5] == ["| 2", "2", "complete 1, looped 1", "0 of 1", "0 of 1"]
    assert int(row[6].split()[0]) > 900 * 0.7  # the prose after the fence and most of the loop


def test_a_cut_changes_an_answer_only_where_its_function_or_what_it_uses_differs() -> None:
    helper = "def frac(x):\n    return x % 1.0\n"
    with_helper = f"{HEADER}    return frac(number)\n\n{helper}"
    assert function_code(with_helper + "\nprint(truncate_number(2.5))\n", "truncate_number") == \
        function_code(with_helper, "truncate_number")
    without_helper = f"{HEADER}    return frac(number)\n"
    assert function_code(with_helper, "truncate_number") != function_code(without_helper, "truncate_number")
    imported = f"import math\n\n{HEADER}    return number - math.floor(number)\n"
    assert function_code(imported, "truncate_number", frozenset({"math"})) == \
        function_code(imported.removeprefix("import math\n\n"), "truncate_number", frozenset({"math"}))
