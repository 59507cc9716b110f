"""What a passing body's checks ran of it: the lines its examples and the project's tests executed, counted
together; a body they ran less than half of is only weakly verified, and says so."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.projects.cli import generate_json

GRADE = '''def grade(score):
    """
    >>> grade(95)
    'A'
    """
    ...
'''
LADDER = ("```python\ndef grade(score):\n    if score >= 90:\n        return 'A'\n    if score >= 80:\n"
          "        return 'B'\n    if score >= 70:\n        return 'C'\n    return 'F'\n```")
ONE_LINE = "```python\ndef grade(score):\n    return 'ABCF'[(score < 90) + (score < 80) + (score < 70)]\n```"


def test_examples_that_run_little_of_a_body_verify_it_only_weakly(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = project / "grades.py"
    module.write_text(GRADE)
    fake.queue(LADDER)
    code, report, stderr = generate_json(f"{module}::grade", tmp_path, fake.base_url)
    [result] = report["results"]
    assert (code, result["status"]) == (0, "passed"), stderr
    assert result["verified_by"] == "1 example (2 of 7 body lines run)"
    assert "only weakly verified" in result["message"]


def test_examples_that_run_the_whole_body_are_said_as_before(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = project / "grades.py"
    module.write_text(GRADE)
    fake.queue(ONE_LINE)
    code, report, stderr = generate_json(f"{module}::grade", tmp_path, fake.base_url)
    [result] = report["results"]
    assert (code, result["verified_by"]) == (0, "1 example"), stderr
    assert "weakly" not in result["message"]
