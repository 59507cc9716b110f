"""What a passing body's checks ran of it: the lines its examples and the project's tests executed, counted
together; a body they ran less than half of is only weakly verified, and says so (with the mutants off). The
mutants see further: an example that runs every line of a body can still pin none of it down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


def generate_grade(tmp_path: Path, project: Path, fake: FakeOpenAI, answer: str,
                   setting: str) -> tuple[int, dict[str, Any], str]:
    """`generate --json` of the `grade` stub answered by `answer`, with `setting` in [tool.pycapsule]: the
    exit code, the one result, stderr."""
    (project / "pyproject.toml").write_text(f"[tool.pycapsule]\n{setting}\n")
    module = project / "grades.py"
    module.write_text(GRADE)
    fake.queue(answer)
    code, report, stderr = generate_json(f"{module}::grade", tmp_path, fake.base_url)
    [result] = report["results"]
    return code, result, stderr


@pytest.mark.parametrize(("answer", "verified_by", "weak"), [
    (LADDER, "1 example (2 of 7 body lines run)", True),
    (ONE_LINE, "1 example", False),
], ids=["examples run little of the body: weakly verified", "examples run all of it: said as before"])
def test_what_the_examples_ran_of_a_body_is_said_when_it_is_little(
        tmp_path: Path, project: Path, fake: FakeOpenAI, answer: str, verified_by: str, weak: bool) -> None:
    code, result, stderr = generate_grade(tmp_path, project, fake, answer, "max_mutants = 0")
    assert (code, result["status"], result["verified_by"]) == (0, "passed", verified_by), stderr
    message = result["message"]
    assert ("only weakly verified" in message, "weakly" in message) == (weak, weak)


@pytest.mark.parametrize("answer", [LADDER, ONE_LINE],
                         ids=["examples run little of it", "examples run all of it"])
def test_one_example_pins_neither_body_down_however_much_of_it_ran(
        tmp_path: Path, project: Path, fake: FakeOpenAI, answer: str) -> None:
    code, result, stderr = generate_grade(tmp_path, project, fake, answer, "min_caught = 0.8")
    assert (code, result["status"]) == (5, "passed_loosely"), stderr
    assert any("90" in survivor["change"] for survivor in result["mutants"]["survivors"]), "the A/B boundary"
    assert result["suggested_examples"], "grade(95)'s neighbours tell the body from what survives"
