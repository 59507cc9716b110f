"""When every attempt fails, `generate` keeps the nearest try (fewest examples failing, then fewest of the
project's tests): it shows it as a diff marked failing with what still fails, writes it only when asked
(`--write-closest`, exit code still 1), and ends with the one step most likely to help."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.projects.cli import generate_json, pycapsule

MODULE = '''def add(a, b):
    """
    >>> add(1, 2)
    3
    >>> add(2, 2)
    4
    """
    ...
'''
BOTH_WRONG = "```python\ndef add(a, b):\n    return 0\n```"
ONE_WRONG = "```python\ndef add(a, b):\n    return 3 if a == 1 else 5\n```"


def stub(project: Path) -> Path:
    module = project / "adding.py"
    module.write_text(MODULE)
    return module


def test_the_closest_try_is_shown_marked_failing_and_not_written(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(ONE_WRONG, BOTH_WRONG)
    code, report, _ = generate_json(f"{module}::add", tmp_path, fake.base_url, "--write")
    [result] = report["results"]
    assert (code, result["status"], report["written"]) == (1, "gave_up", False)
    assert module.read_text() == MODULE
    closest = result["closest"]
    assert closest["attempt"] == 1, "the first try failed one example, the last two: the first is nearer"
    assert "add(2, 2) expected 4, got 5" in closest["failing"]
    assert "+    return 3 if a == 1 else 5" in closest["diff"]


def test_write_closest_writes_it_and_still_exits_1(tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(BOTH_WRONG, ONE_WRONG)
    code, report, _ = generate_json(f"{module}::add", tmp_path, fake.base_url, "--write-closest")
    assert (code, report["written"]) == (1, True)
    assert "return 3 if a == 1 else 5" in module.read_text()


def test_the_terminal_shows_the_closest_diff_and_one_next_step(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(BOTH_WRONG, ONE_WRONG)
    done = pycapsule("generate", f"{module}::add", "--max-attempts", "2", home=tmp_path,
                     model_url=fake.base_url)
    assert done.returncode == 1
    assert "add: the closest try was attempt 2, still failing: " in done.stderr
    assert "not written; --write-closest writes it" in done.stderr
    assert "  +    return 3 if a == 1 else 5" in done.stderr
    assert "add: next: it came within one failure; `--max-attempts 4`" in done.stderr
    assert done.stdout == "", "nothing passed: the diff of what would be written is empty"


def test_write_closest_after_a_preview_asks_no_model(tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(BOTH_WRONG, ONE_WRONG)
    generate_json(f"{module}::add", tmp_path, fake.base_url)
    code, report, stderr = generate_json(f"{module}::add", tmp_path, fake.base_url, "--write-closest")
    assert len(fake.chat_requests) == 2 and "no model is asked" in stderr
    assert (code, report["written"]) == (1, True)
    assert "return 3 if a == 1 else 5" in module.read_text()


def test_a_new_run_starts_from_what_earlier_runs_found(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(BOTH_WRONG)
    generate_json(f"{module}::add", tmp_path, fake.base_url, "--max-attempts", "1")
    fake.queue(BOTH_WRONG, "```python\ndef add(a, b):\n    return a + b\n```")

    code, report, stderr = generate_json(f"{module}::add", tmp_path, fake.base_url, "--write")

    first_of_the_new_run = fake.chat_requests[1]
    assert "Earlier attempts failed like this" in first_of_the_new_run.task_message
    assert "add(1, 2)" in first_of_the_new_run.task_message
    assert "repeated a body an earlier run tried (not run again)" in stderr
    assert "already failed" in fake.chat_requests[2].task_message
    [result] = report["results"]
    assert (code, result["status"], result["attempts"]) == (0, "passed", 2)
