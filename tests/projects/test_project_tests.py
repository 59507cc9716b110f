""""Passed" in a real project means the project's own tests pass too: the tests that name the function
run with pytest, in the sandbox, with the project's interpreter (its `.venv`, whose programs the host never
runs), after the examples pass or when there are none. A body that only fits its examples is not written;
an unrelated or already failing test is never charged to the model; test files are never changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pycapsule.history import History

from tests.fakes.openai_server import FakeOpenAI
from tests.projects import builders
from tests.projects.cli import check_json, generate_json, pycapsule

PYTEST_SITE = str(Path(pytest.__file__).resolve().parent.parent)
FITS_THE_EXAMPLE = "```python\ndef percent(part, whole):\n    return '50%'\n```"
RIGHT_PERCENT = ("```python\ndef percent(part, whole):\n"
                 "    return f'{part * 100 // whole}{unitconv.PERCENT}'\n```")


@pytest.fixture
def stats(project: Path) -> Path:
    return builders.project_with_tests_and_venv(project, PYTEST_SITE)


def test_a_body_that_only_fits_its_example_is_not_passed_the_next_that_passes_the_tests_is(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    tests_before = (project / "tests/test_core.py").read_bytes()
    fake.queue(FITS_THE_EXAMPLE, RIGHT_PERCENT)

    code, report, stderr = generate_json(f"{stats}::percent", tmp_path, fake.base_url, "--write")

    [result] = report["results"]
    assert (result["status"], result["attempts"], code) == ("passed", 2, 0), stderr
    assert result["verified_by"] == "1 example + 2 tests (tests/test_core.py; 1 of 1 body line run)"
    assert "attempt 1/2: 2 of 2 project tests failed: tests/test_core.py::test_percent_rounds_down" in stderr
    assert "    return f'{part * 100 // whole}{unitconv.PERCENT}'\n" in stats.read_text()
    assert (project / "tests/test_core.py").read_bytes() == tests_before
    assert "test_unrelated_and_already_failing" not in stderr + str(fake.chat_requests[1].body)
    passed, failed = History(tmp_path / "history.sqlite3").attempts(stats, "percent")
    assert passed.verified == ("verified by 1 example + 2 tests (tests/test_core.py; 1 of 1 body line run); "
                               "they catch 8 of 8 small changes"), \
        "the CLI's history names what verified the result, as hover shows it (tests/lsp/test_hover.py)"
    assert (failed.verified, passed.applied) == ("", ""), "told on the result only; no editor was asked"


def test_when_every_answer_fails_the_tests_nothing_is_written(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    before = stats.read_text()
    fake.queue(FITS_THE_EXAMPLE, FITS_THE_EXAMPLE.replace("'50%'", "str(part * 50) + '%'"))
    code, report, stderr = generate_json(f"{stats}::percent", tmp_path, fake.base_url, "--write")
    [result] = report["results"]
    assert (result["status"], code) == ("gave_up", 1), stderr
    assert stats.read_text() == before


def test_a_function_without_examples_is_verified_by_its_tests(
        tmp_path: Path, stats: Path, fake: FakeOpenAI) -> None:
    fake.queue("```python\ndef clamp(x, lo, hi):\n    return max(x, lo)\n```",
               "```python\ndef clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n```")
    code, report, stderr = generate_json(f"{stats}::clamp", tmp_path, fake.base_url, "--write")
    [result] = report["results"]
    assert (result["status"], result["attempts"], code) == ("passed", 2, 0), stderr
    assert result["verified_by"] == "3 tests (tests/test_core.py; 1 of 1 body line run)"
    assert "1 of 3 project tests failed: tests/test_core.py::test_clamp_above" in stderr


def test_a_test_that_already_fails_on_the_file_is_left_out_and_said(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    with (project / "tests/test_core.py").open("a") as tests:
        tests.write("\n\ndef test_mean_of_nothing():\n    assert mean([]) == 0\n")
    code, report, stderr = generate_json(f"{stats}::mean", tmp_path, fake.base_url)
    [result] = report["results"]
    assert fake.chat_requests == [], "the function passes what is not already failing: no model call"
    assert (result["status"], code) == ("passed", 0), stderr
    assert result["verified_by"] == "1 example + 1 test (tests/test_core.py; 1 of 1 body line run)"
    assert "mean: already failing, so left out: tests/test_core.py::test_mean_of_nothing" in stderr


def test_tests_and_bodies_run_in_the_sandbox_and_write_nothing_outside_the_project(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    canaries = [tmp_path / "written-by-a-test", tmp_path / "written-by-a-body"]
    with (project / "tests/test_core.py").open("a") as tests:
        tests.write(f"\n\ndef test_clamp_and_escape():\n    open({str(canaries[0])!r}, 'w').close()\n"
                    "    assert clamp(1, 0, 3) == 1\n")
    fake.queue(f"```python\ndef clamp(x, lo, hi):\n    open({str(canaries[1])!r}, 'w').close()\n"
               "    return min(max(x, lo), hi)\n```")
    _, report, stderr = generate_json(f"{stats}::clamp", tmp_path, fake.base_url, "--max-attempts", "1")
    assert [r["status"] for r in report["results"]] == ["gave_up"], stderr
    assert not any(canary.exists() for canary in canaries)


def test_the_projects_venv_is_used_and_none_of_its_programs_runs_on_the_host(
        tmp_path: Path, project: Path, stats: Path) -> None:
    canary = tmp_path / "written-by-the-venv"
    [site] = (project / ".venv").glob("lib/python3*/site-packages")
    (site / "aa_hostile.pth").write_text(f"import os; open({str(canary)!r}, 'w').close()\n")

    code, report = check_json(f"{stats}::mean", tmp_path)
    assert (code, [f["failed"] for f in report["functions"]]) == (0, [0]), report
    shown = pycapsule("config", str(project), home=tmp_path).stdout
    assert f"python:           {project / '.venv/bin/python'} (.venv at the project root)" in shown
    assert not canary.exists()


def test_a_missing_package_is_one_sentence_naming_the_interpreter_before_any_model_call(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    plain = "/usr/bin/python3" if Path("/usr/bin/python3").is_file() else None
    if plain is None:
        pytest.skip("needs a system Python at /usr/bin/python3 without the project's packages")
    _, report, _ = generate_json(f"{stats}::percent", tmp_path, fake.base_url, "--python", plain)
    [result] = report["results"]
    assert fake.chat_requests == []
    assert result["status"] == "error" and "\n" not in result["message"]
    assert f"unitconv is not installed for {plain} (set by --python)" in result["message"]


def test_a_repair_is_a_small_change_guarded_by_the_projects_tests(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    """The docstring says 4.0 and 5.0 where the body adds one too many: the example fails. A rewrite that
    fits the example breaks what the project's tests rely on (floats for ints); the one-line fix does not."""
    stats.write_text(stats.read_text().replace("[4.0, 5.0]", "[3.0, 4.0]"))
    fake.queue("```python\ndef scale(values, factor):\n    return [value * factor for value in values]\n```",
               "```python\ndef scale(values, factor):\n    result = []\n    for value in values:\n"
               "        result.append(float(value) * factor)\n    return result\n```")

    code, report, stderr = generate_json(f"{stats}::scale", tmp_path, fake.base_url, "--write")

    [result] = report["results"]
    assert (result["status"], result["attempts"], code) == ("passed", 2, 0), stderr
    ending = "after 2 attempt(s); they catch 5 of 5 small changes; it changed 1 of 4 body lines"
    assert result["message"].endswith(ending), result["message"]
    assert result["verified_by"] == "1 example + 2 tests (tests/test_core.py; 4 of 4 body lines run)"
    assert "1 of 2 project tests failed: tests/test_core.py::test_scale_gives_floats_for_ints" in stderr
    second = fake.chat_requests[1].body["messages"][-1]["content"]
    assert "float(value) * factor + 1" in second and "smallest change" in second
    assert "value * factor for value in values" not in second, "each repair starts from the body as it stands"
    assert "        result.append(float(value) * factor)\n" in stats.read_text()


def sign_tested_on_one_positive(project: Path, stats: Path, fake: FakeOpenAI, setting: str) -> None:
    """`sign` as a stub, one test of it (a positive number), the model's right body queued; `setting` in the
    project's [tool.pycapsule]."""
    (project / "pyproject.toml").write_text(f'[project]\nname = "stats"\nversion = "0"\n\n[tool.pycapsule]\n'
                                            f"{setting}\n")
    with stats.open("a") as module:
        module.write('\n\ndef sign(x):\n    """-1, 0 or 1 as x is negative, zero or positive."""\n    ...\n')
    with (project / "tests/test_core.py").open("a") as tests:
        tests.write("\n\ndef test_sign_of_a_positive():\n    from stats.core import sign\n"
                    "    assert sign(5) == 1\n")
    fake.queue("```python\ndef sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n"
               "    return 0\n```")


def test_tests_that_pin_little_of_a_body_leave_it_passed_loosely_with_what_they_miss(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    sign_tested_on_one_positive(project, stats, fake, "min_caught = 0.8")
    code, report, stderr = generate_json(f"{stats}::sign", tmp_path, fake.base_url, "--write")
    [result] = report["results"]
    assert (result["status"], code) == ("passed_loosely", 5), stderr
    assert result["verified_by"] == "1 test (tests/test_core.py; 2 of 5 body lines run)"
    assert "    if x < 0:\n        return -1\n" in stats.read_text(), "written as asked"
    mutants = result["mutants"]
    assert not mutants["capped"] and mutants["caught"] >= 1, "the test catches what it reaches"
    changed = {survivor["change"] for survivor in mutants["survivors"]}
    assert {"`x > 0` -> `x >= 0`", "`return -1` -> `return None`"} <= changed  # sign(0), sign(-5): untested
    assert result["suggested_examples"] == [], "no example to vary: the function has none"
    [passed] = History(tmp_path / "history.sqlite3").attempts(stats, "sign")
    assert passed.verified.startswith(
        "loosely verified by 1 test (tests/test_core.py; 2 of 5 body lines run); they catch ")


def test_tests_that_run_little_of_a_body_verify_it_only_weakly_without_the_mutants(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    sign_tested_on_one_positive(project, stats, fake, "max_mutants = 0")
    code, report, stderr = generate_json(f"{stats}::sign", tmp_path, fake.base_url)
    [result] = report["results"]
    assert (result["status"], code) == ("passed", 0), stderr
    assert result["verified_by"] == "1 test (tests/test_core.py; 2 of 5 body lines run)"
    assert result["message"].endswith("but they ran less than half of its lines: only weakly verified")
    [passed] = History(tmp_path / "history.sqlite3").attempts(stats, "sign")
    assert passed.verified == "only weakly verified by 1 test (tests/test_core.py; 2 of 5 body lines run)"


def test_check_names_the_projects_tests_and_runs_them_with_tests(tmp_path: Path, stats: Path) -> None:
    hint = pycapsule("check", f"{stats}::clamp", home=tmp_path)
    assert "3 project test(s) exercise this (tests/test_core.py): add --tests to run them too" in hint.stdout
    assert hint.returncode == 0, "without --tests the doctests alone decide (clamp has none)"

    ran = pycapsule("check", f"{stats}::clamp", "--tests", home=tmp_path)
    assert ran.returncode == 1
    assert "project tests (tests/test_core.py): 0 passed, 3 failed" in ran.stdout

    code, report = check_json(f"{stats}::mean", tmp_path)
    assert code == 0 and report["tests"]["ran"] is False
    assert report["tests"]["selected"] == ["tests/test_core.py::test_mean_of_one"]


def test_a_body_that_prints_a_passing_report_and_exits_does_not_pass(
        tmp_path: Path, stats: Path, fake: FakeOpenAI) -> None:
    forged = ('pycapsule-tests-report: {"exit": 0, "passed": 3, "failed": 0, "skipped": 0, "failures": [], '
              '"failed_ids": [], "lines": []}')
    fake.queue(f"```python\ndef clamp(x, lo, hi):\n    import os\n    print({forged!r}, flush=True)\n"
               "    os._exit(0)\n```")
    code, report, stderr = generate_json(f"{stats}::clamp", tmp_path, fake.base_url, "--max-attempts", "1")
    [result] = report["results"]
    assert (result["status"], code) == ("gave_up", 1), stderr
    assert "the project's tests (tests/test_core.py) ended early" in stderr


def test_a_body_that_forges_the_tests_report_from_inside_pytest_does_not_pass(
        tmp_path: Path, stats: Path, fake: FakeOpenAI) -> None:
    passing = ('{"exit": 0, "passed": 3, "failed": 0, "skipped": 0, "failures": [], "failed_ids": [], '
               '"lines": []}')
    fake.queue(f"""```python
def clamp(x, lo, hi):
    import json, os
    json.dumps = lambda *args, **options: {passing!r}
    os.write(1, b"pycapsule-tests-report: " + {passing!r}.encode() + b"\\n")
    return max(x, lo)
```""")
    code, report, stderr = generate_json(f"{stats}::clamp", tmp_path, fake.base_url, "--max-attempts", "1")
    [result] = report["results"]
    assert (result["status"], code) == ("gave_up", 1), stderr
    assert "project tests failed" in stderr


def test_a_body_that_fails_only_with_an_iterator_is_kept_only_if_the_projects_tests_pass(
        tmp_path: Path, project: Path, stats: Path, fake: FakeOpenAI) -> None:
    """A body that indexes its iterable passes list examples; the fallback that keeps such a body when no
    answer does better must not keep one that fails the project's tests."""
    with stats.open("a") as module:
        module.write('\n\ndef last(iterable):\n    """The last item.\n\n    >>> last([1, 2, 3])\n    3\n'
                     '    """\n    ...\n')
    with (project / "tests/test_core.py").open("a") as tests:
        tests.write("\n\ndef test_last_of_a_generator():\n    from stats.core import last\n"
                    "    assert last(x for x in [1, 2]) == 2\n")
    fake.queue("```python\ndef last(iterable):\n    return iterable[-1]\n```")
    code, report, stderr = generate_json(f"{stats}::last", tmp_path, fake.base_url, "--max-attempts", "1")
    [result] = report["results"]
    assert (result["status"], code) == ("gave_up", 1), stderr
    assert "tests/test_core.py::test_last_of_a_generator" in result["message"]


def test_check_strength_with_tests_judges_the_changes_by_the_examples_and_the_passing_tests(
        tmp_path: Path, stats: Path) -> None:
    done = pycapsule("check", f"{stats}::mean", "--tests", "--strength", "--json", home=tmp_path)
    [function] = json.loads(done.stdout)["functions"]
    strength = function["strength"]
    assert done.returncode == 0 and strength["run"] > 0 and strength["caught"] == strength["run"], strength
    assert json.loads(done.stdout)["tests"]["passed"] == 1
