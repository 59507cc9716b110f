"""`pycapsule bench` end to end: the real CLI, engine, loop and sandbox against the scripted model server.

The scripted model answers per function: wrong first and right on the fix for one task, right at
once for another, always wrong for the third; so the run shows a pass at attempt 2, a pass at
attempt 1 and a failure, and the report, resume and reuse can be checked exactly.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from pycapsule.__main__ import main
from pycapsule.bench.portable import portable_command
from pycapsule.bench.records import read_records
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import capsule_by_qualname
from pycapsule.exit_codes import ExitCode

from tests.bench.published import publish
from tests.datasets import tasks_of
from tests.fakes.openai_server import Error, FakeOpenAI, Hang, RecordedRequest, Text

SECRET = "sk-bench-test-secret-7a1c"


def _wrong(task: BenchTask) -> str:
    capsule = capsule_by_qualname(task.prompt, task.entry_point)
    return f"{capsule.header}{capsule.indent}return None\n"


class ScriptedModel:
    """Answers each function's requests in turn from its script (the last answer repeats)."""

    def __init__(self, tasks: list[BenchTask]) -> None:
        right = {t.entry_point: f"```python\n{t.reference}```" for t in tasks}
        wrong = {t.entry_point: f"```python\n{_wrong(t)}```" for t in tasks}
        first, second, third = (t.entry_point for t in tasks)
        self.scripts = {first: [wrong[first], right[first]], second: [right[second]], third: [wrong[third]]}
        self.calls: Counter[str] = Counter()

    def __call__(self, request: RecordedRequest) -> Text:
        task_function = request.task_function
        name = next(name for name in self.scripts if f"def {name}(" in task_function)
        script = self.scripts[name]
        answer = script[min(self.calls[name], len(script) - 1)]
        self.calls[name] += 1
        return Text(answer)


@pytest.fixture
def tasks() -> list[BenchTask]:
    return tasks_of("humaneval")[:3]


@pytest.fixture
def model(tasks: list[BenchTask], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=ScriptedModel(tasks)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.delenv("PYCAPSULE_MODEL", raising=False)
        monkeypatch.chdir(tmp_path)
        yield server


def _bench(out: Path, *extra: str) -> int:
    return main(["bench", "humaneval", "--limit", "3", "--max-attempts", "3", "--workers", "2",
                 "--out", str(out), *extra])


def _records(out: Path, pattern: str) -> dict[str, dict]:
    [path] = out.glob(pattern)
    return {tid: vars(record) for tid, record in read_records(path).items()}


def test_selfdebug_run_scores_with_hidden_tests_and_reports_the_attempts(
        model: FakeOpenAI, tasks: list[BenchTask], tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _bench(out) == 0
    records = _records(out, "humaneval-selfdebug-*.jsonl")
    first, second, third = (t.task_id for t in tasks)
    outcomes = {tid: (r["status"], r["attempts"], r["passed_attempt"], r["model_calls"])
                for tid, r in records.items()}
    expected = {first: ("passed", 2, 2, 2), second: ("passed", 1, 1, 1), third: ("failed", 3, None, 3)}
    assert outcomes == expected, {tid: r["headlines"] for tid, r in records.items()}
    assert records[third]["outcome"] == "gave_up" and records[third]["detail"].startswith("AssertionError")
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in records.values())
    assert len(model.chat_requests) == 6

    # the honest protocol: hidden tests never reach the model
    for request in model.chat_requests:
        assert "def check(candidate)" not in request.prompt_text and "METADATA" not in request.prompt_text
        for task in tasks:
            hidden_asserts = [line.strip() for line in task.hidden_test.splitlines() if "assert" in line]
            assert hidden_asserts and not any(line in request.prompt_text for line in hidden_asserts)

    report = (out / "report.md").read_text()
    assert "| **66.7** | 2/3 |" in report
    assert "| selfdebug ≤3, restarts only | 1 (50%) | 1 (50%) | 0 (0%) |" in report  # attempt 1, 2, 3
    command = f"pycapsule bench humaneval --mode selfdebug --max-attempts 3 --limit 3 --workers 2 --out {out}"
    assert f"`{portable_command(command)}`" in report  # relative where the checkout is beside `out` (in /tmp)
    assert (out / "attempts.png").stat().st_size > 1000 and (out / "pass_at_1.png").stat().st_size > 1000

    # secrets never reach results
    for path in out.iterdir():
        assert SECRET not in path.read_bytes().decode("utf-8", "replace")


def test_a_finished_run_resumes_without_asking_the_model_again(model: FakeOpenAI, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _bench(out) == 0
    asked = len(model.chat_requests)
    [results] = out.glob("humaneval-selfdebug-*.jsonl")
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # one task lost, one line torn
    assert _bench(out) == 0
    assert len(read_records(results)) == 3
    assert 1 <= len(model.chat_requests) - asked <= 3  # only the lost task was asked again


def test_a_shorter_rerun_counts_only_the_tasks_within_its_limit(
        model: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _bench(out) == 0  # tasks 1 and 2 pass, task 3 fails
    capsys.readouterr()
    assert main(["bench", "humaneval", "--limit", "2", "--max-attempts", "3", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "pass@1 100.0% (2/2), 2/2 tasks done (1 more kept from a longer run)," in line, line


def test_a_published_run_resumes_from_its_gzipped_records_through_the_cli(
        model: FakeOpenAI, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _bench(out) == 0
    [results] = publish(out, tmp_path / "records")
    lines = gzip.decompress(results.read_bytes()).splitlines(keepends=True)
    results.write_bytes(gzip.compress(b"".join(lines[:2])))  # one task lost
    asked = len(model.chat_requests)

    assert _bench(out) == 0
    assert len(read_records(results)) == 3 and not list(out.glob("*.jsonl"))
    assert 1 <= len(model.chat_requests) - asked <= 3  # only the lost task was asked again
    assert "| **66.7** | 2/3 |" in (out / "report.md").read_text()


def test_tasks_prepared_differently_start_a_new_run_instead_of_resuming_the_old_one(
        model: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pycapsule.commands.bench as bench_command

    out = tmp_path / "results"
    assert _bench(out) == 0
    asked = len(model.chat_requests)
    load_tasks = bench_command.load_tasks

    def reader_that_prepares_task_5_differently(dataset: str, data: object = None) -> tuple:
        path, tasks = load_tasks(dataset, data)
        changed = tasks[4].prompt.replace('"""', '"""Prepared differently. ', 1)
        return path, [*tasks[:4], replace(tasks[4], prompt=changed), *tasks[5:]]

    monkeypatch.setattr(bench_command, "load_tasks", reader_that_prepares_task_5_differently)
    [first] = out.glob("humaneval-selfdebug-*.jsonl")
    assert _bench(out) == 0  # task 5 is beyond --limit 3: still a different run
    [second] = set(out.glob("humaneval-selfdebug-*.jsonl")) - {first}
    # its tasks are not taken as done; the unchanged prompts' generations are re-scored, not asked again
    assert {record.reused_from for record in read_records(second).values()} == {first.name}
    assert len(read_records(second)) == 3 and len(model.chat_requests) == asked


def test_direct_mode_is_one_call_per_task_and_the_report_shows_the_gain(
        model: FakeOpenAI, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _bench(out, "--mode", "direct") == 0
    direct = _records(out, "humaneval-direct-*.jsonl")
    assert [r["model_calls"] for r in direct.values()] == [1, 1, 1]
    assert sorted(r["status"] for r in direct.values()) == ["failed", "failed", "passed"]
    assert _bench(out) == 0
    report = (out / "report.md").read_text()
    assert "| selfdebug ≤3, restarts only | 3 | 33.3 | 66.7 | +33.3 |" in report


def test_direct_after_selfdebug_takes_each_tasks_first_attempt_without_asking_the_model(
        model: FakeOpenAI, tasks: list[BenchTask], tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _bench(out) == 0
    asked = len(model.chat_requests)
    assert _bench(out, "--mode", "direct") == 0
    assert len(model.chat_requests) == asked
    direct = _records(out, "humaneval-direct-*.jsonl")
    selfdebug = _records(out, "humaneval-selfdebug-*.jsonl")
    first, second, third = (t.task_id for t in tasks)
    # the first task passed at attempt 2 under self-debugging: its direct (attempt 1) answer fails
    statuses = {tid: r["status"] for tid, r in direct.items()}
    assert statuses == {first: "failed", second: "passed", third: "failed"}
    assert all(r["model_calls"] == 1 and r["reused_from"].startswith("humaneval-selfdebug-")
               for r in direct.values())
    for tid, record in direct.items():
        assert record["codes"] == selfdebug[tid]["codes"][:1]
        assert [record["prompt_tokens"], record["completion_tokens"]] == selfdebug[tid]["attempt_tokens"][0]
    report = (out / "report.md").read_text()
    assert "| selfdebug ≤3, restarts only | 3 | 33.3 | 66.7 | +33.3 |" in report


def test_humaneval_et_reuses_the_same_prompts_generations_and_only_rescores(
        model: FakeOpenAI, tmp_path: Path) -> None:
    tasks_of("humaneval-et")  # skipped with the reason where its data is absent (a clone elsewhere)
    out = tmp_path / "results"
    assert _bench(out) == 0
    asked = len(model.chat_requests)
    assert main(["bench", "humaneval-et", "--limit", "3", "--max-attempts", "3", "--out", str(out)]) == 0
    assert len(model.chat_requests) == asked
    et = _records(out, "humaneval-et-selfdebug-*.jsonl")
    assert all(r["reused_from"].startswith("humaneval-selfdebug-") for r in et.values())
    assert sorted(r["status"] for r in et.values()) == ["failed", "passed", "passed"]
    # other generation settings: nothing to reuse, the model is asked
    assert main(["bench", "humaneval-et", "--limit", "3", "--max-attempts", "2", "--out", str(out)]) == 0
    assert len(model.chat_requests) > asked


@pytest.mark.parametrize(("argv", "message"), [
    (["bench", "mbpp", "--data", "/nonexistent/mbpp.json"], "pycapsule bench: no mbpp data at /nonexistent"),
    (["bench", "humaneval", "--limit", "0"], "pycapsule bench: --limit must be at least 1, not 0"),
])
def test_bad_input_is_one_sentence_and_exit_code_2(argv: list[str], message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(message) and "Traceback" not in error and len(error.strip().splitlines()) == 1


def test_an_unreachable_model_stops_the_run_and_records_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks_of("humaneval")  # the run needs its tasks before it reaches the model: skipped where absent
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("PYCAPSULE_MODEL", "fake-coder")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nmodel_retries = 0\n")  # fail fast
    code = main(["bench", "humaneval", "--limit", "3", "--out", str(tmp_path / "r")])
    assert code == ExitCode.MODEL_UNAVAILABLE
    error = capsys.readouterr().err
    assert "rerun the same command to resume" in error and "Traceback" not in error
    assert all(not read_records(path) for path in (tmp_path / "r").glob("*.jsonl"))
    [manifest] = (tmp_path / "r").glob("humaneval-*.json")  # the run's manifest (not summary.json)
    assert json.loads(manifest.read_text())["total_tasks"] == 3


def test_a_task_the_model_fails_is_not_recorded_and_the_run_says_so_and_how_to_retry_it(
        tasks: list[BenchTask], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    failing = tasks[1]

    def answer(request: RecordedRequest) -> Text | Error:
        if f"def {failing.entry_point}(" in request.task_function:
            return Error(500, "the model crashed")
        task = next(t for t in tasks if f"def {t.entry_point}(" in request.task_function)
        return Text(f"```python\n{task.reference}```")

    with FakeOpenAI(responder=answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("PYCAPSULE_MODEL", "fake-coder")
        monkeypatch.chdir(tmp_path)
        (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nmodel_retries = 0\n")
        code = main(["bench", "humaneval", "--limit", "3", "--workers", "1", "--out", str(tmp_path / "r")])
    assert code == 0
    records = _records(tmp_path / "r", "humaneval-selfdebug-*.jsonl")
    assert set(records) == {tasks[0].task_id, tasks[2].task_id}
    error = capsys.readouterr().err
    assert f"1 task(s) not recorded because the model failed them ({failing.task_id}: " in error
    assert error.rstrip().endswith("rerun the same command to retry them")


@pytest.mark.parametrize("started_with_sigint_ignored", [False, True],
                         ids=["ctrl-c from a terminal", "sigterm to a background job of a script"])
def test_ctrl_c_stops_at_once_keeps_finished_tasks_and_says_how_to_resume(
        tasks: list[BenchTask], tmp_path: Path, started_with_sigint_ignored: bool) -> None:
    """Ctrl-C stops a run started from a terminal; SIGTERM (`kill`, `timeout`) stops one started as a
    background job of a script, which a shell without job control starts with SIGINT ignored."""
    first = tasks[0]

    def answer(request: RecordedRequest) -> Text | Hang:
        if f"def {first.entry_point}(" in request.prompt_text:
            return Text(f"```python\n{first.reference}```")
        return Hang()

    out = tmp_path / "results"
    with FakeOpenAI(responder=answer) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET}
        command = [sys.executable, "-m", "pycapsule", "bench", "humaneval", "--limit", "3", "--workers", "1",
                   "--out", str(out)]
        if started_with_sigint_ignored:
            command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]  # exec keeps it ignored
        process = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(server.chat_requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the second task's request is hanging now
        process.send_signal(signal.SIGTERM if started_with_sigint_ignored else signal.SIGINT)
        interrupted = time.monotonic()
        try:
            _, error = process.communicate(timeout=30)
        finally:
            process.kill()  # still running: the signal was lost (the test fails on the timeout)
        stopped_after = time.monotonic() - interrupted
    assert process.returncode == 130, error
    assert "interrupted; finished tasks are kept, rerun the same command to resume" in error
    assert "Traceback" not in error
    assert stopped_after < 10
    [results] = out.glob("humaneval-selfdebug-*.jsonl")
    assert {tid: r.status for tid, r in read_records(results).items()} == {first.task_id: "passed"}
    assert (out / "report.md").is_file()


def _bigcodebench_row(name: str, libs: list[str]) -> dict[str, str]:
    imports = "".join(f"import {lib}\n" for lib in libs)
    prompt = f'{imports}\ndef {name}(x):\n    """Double x.\n\n    >>> {name}(2)\n    4\n    """\n'
    test = ("import unittest\n\nclass TestCases(unittest.TestCase):\n"
            f"    def test_double(self):\n        self.assertEqual({name}(3), 6)\n")
    return {"task_id": f"BigCodeBench/{name}", "complete_prompt": prompt, "code_prompt": prompt,
            "canonical_solution": "    return 2 * x\n", "test": test, "entry_point": name, "libs": str(libs),
            "doc_struct": "{}", "instruct_prompt": ""}


def _bench_bigcodebench(rows: list[dict[str, str]], answered: str, monkeypatch: pytest.MonkeyPatch,
                        tmp_path: Path) -> tuple[Path, int]:
    """Run `bench bigcodebench` on `rows` with a model that answers `answered`'s reference body; the
    results folder and how many requests the model had."""
    data = tmp_path / "bcb.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    answer = f"```python\ndef {answered}(x):\n    return 2 * x\n```"
    with FakeOpenAI(responder=lambda request: Text(answer)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        out = tmp_path / "results"
        assert main(["bench", "bigcodebench", "--data", str(data), "--workers", "1", "--out", str(out)]) == 0
        return out, len(server.chat_requests)


def test_a_run_records_which_python_and_library_versions_the_sandbox_scored_with(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rows = [_bigcodebench_row("uses_pytest", ["pytest", "json"]),
            _bigcodebench_row("uses_nothing_installed", ["pycapsule_no_such_lib"])]
    out, requests = _bench_bigcodebench(rows, "uses_pytest", monkeypatch, tmp_path)
    assert requests == 1  # the task whose library is missing is not sent

    [manifest_path] = out.glob("bigcodebench-selfdebug-*.json")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["sandbox_python"] == platform.python_version()  # the interpreter running the tests
    assert manifest["sandbox_libraries"] == {"pytest": f"pytest {pytest.__version__}"}
    statuses = {tid: r["status"] for tid, r in _records(out, "bigcodebench-selfdebug-*.jsonl").items()}
    assert statuses == {"BigCodeBench/uses_pytest": "passed",
                        "BigCodeBench/uses_nothing_installed": "unscorable"}
    assert f"the tasks' libraries: pytest (pytest {pytest.__version__})" in (out / "report.md").read_text()


def test_a_task_whose_module_cannot_be_imported_here_is_unscorable_and_never_sent_to_the_model(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A module that fails outside the function (data its library needs, a library that cannot load here)
    ends every answer the same way: recorded unscorable with the reason, not left for a retry, and three in a
    row do not stop the run the way three model failures do."""
    broken = [_bigcodebench_row(f"needs_data_{i}", ["json"]) for i in range(3)]
    for row in broken:
        row["complete_prompt"] = row["code_prompt"] = row["complete_prompt"].replace(
            "\ndef ", '\nSTOPWORDS = json.loads("not downloaded")\n\ndef ', 1)
    out, requests = _bench_bigcodebench([*broken, _bigcodebench_row("uses_json", ["json"])], "uses_json",
                                        monkeypatch, tmp_path)
    assert requests == 1

    records = _records(out, "bigcodebench-selfdebug-*.jsonl")
    assert {tid: r["status"] for tid, r in records.items()} == {
        "BigCodeBench/needs_data_0": "unscorable", "BigCodeBench/needs_data_1": "unscorable",
        "BigCodeBench/needs_data_2": "unscorable", "BigCodeBench/uses_json": "passed"}
    detail = records["BigCodeBench/needs_data_0"]["detail"]
    assert "the module cannot be imported" in detail and "JSONDecodeError" in detail
    printed = capsys.readouterr()
    assert "not recorded" not in printed.err and "pass@1 100.0% (1/1, 3 unscorable)" in printed.out
