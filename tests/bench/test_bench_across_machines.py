"""A run split across machines, end to end: the real CLI, engine, loop and sandbox against the scripted model
server. Shards of one run merged give the records one unsharded run gives; a shard resumes; a merge of
different configurations is refused; and `--workers N` against an endpoint is N requests at once."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.__main__ import main
from pycapsule.bench.records import read_manifest, read_records
from pycapsule.bench.tasks import BenchTask

from tests.bench.test_bench_cli import SECRET, ScriptedModel
from tests.datasets import tasks_of
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Text


@pytest.fixture
def tasks() -> list[BenchTask]:
    return tasks_of("humaneval")[:3]


@pytest.fixture
def scripted(tasks: list[BenchTask]) -> ScriptedModel:
    """Wrong then right for the first task, right for the second, always wrong for the third."""
    return ScriptedModel(tasks)


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    """The scripted server as OPENAI_BASE_URL; a test sets its `responder`."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.delenv("PYCAPSULE_MODEL", raising=False)
        monkeypatch.chdir(tmp_path)
        yield server


def _bench(out: Path, *extra: str, limit: int = 3) -> int:
    return main(["bench", "humaneval", "--limit", str(limit), "--max-attempts", "3", "--workers", "2",
                 "--out", str(out), *extra])


def _outcomes(folder: Path) -> dict[str, tuple[str, int, int | None, int]]:
    [results] = folder.glob("humaneval-selfdebug-*.jsonl")
    return {tid: (r.status, r.attempts, r.passed_attempt, r.model_calls)
            for tid, r in read_records(results).items()}


def test_two_shards_merged_give_the_records_of_one_unsharded_run(
        endpoint: FakeOpenAI, scripted: ScriptedModel, tasks: list[BenchTask], tmp_path: Path) -> None:
    endpoint.responder = scripted
    assert _bench(tmp_path / "whole") == 0
    for shard, folder in (("1/2", "machine-a"), ("2/2", "machine-b")):
        scripted.calls.clear()  # each machine's model answers its tasks afresh
        assert _bench(tmp_path / folder, "--shard", shard) == 0

    first, second, third = (t.task_id for t in tasks)
    assert set(_outcomes(tmp_path / "machine-a")) == {first, third}  # positions 1 and 3
    assert set(_outcomes(tmp_path / "machine-b")) == {second}
    [shard_manifest] = (tmp_path / "machine-a").glob("humaneval-*.json")  # the manifest, not summary.json
    [whole_manifest] = (tmp_path / "whole").glob("humaneval-*.json")
    assert shard_manifest.name == whole_manifest.name  # one run: the shard is not part of its hash
    assert read_manifest(shard_manifest)["shards"] == ["1/2"]
    assert "shards" not in read_manifest(whole_manifest)

    merged = tmp_path / "merged"
    assert main(["bench", "merge", str(tmp_path / "machine-a"), str(tmp_path / "machine-b"),
                 "--out", str(merged)]) == 0

    assert _outcomes(merged) == _outcomes(tmp_path / "whole")
    assert _outcomes(merged) == {first: ("passed", 2, 2, 2), second: ("passed", 1, 1, 1),
                                 third: ("failed", 3, None, 3)}
    assert read_manifest(merged / whole_manifest.name)["shards"] == ["1/2", "2/2"]
    assert "| **66.7** | 2/3 |" in (merged / "report.md").read_text()


def test_a_shard_rerun_resumes_its_own_unfinished_tasks_only(
        endpoint: FakeOpenAI, scripted: ScriptedModel, tasks: list[BenchTask], tmp_path: Path) -> None:
    endpoint.responder = scripted
    out = tmp_path / "machine-a"
    assert _bench(out, "--shard", "1/2") == 0
    [results] = out.glob("*.jsonl")
    lines = results.read_text().splitlines()
    results.write_text(lines[0] + "\n")  # one of its two tasks lost
    asked = len(endpoint.chat_requests)

    assert _bench(out, "--shard", "1/2") == 0

    assert set(read_records(results)) == {tasks[0].task_id, tasks[2].task_id}
    asked_again = {name for r in endpoint.chat_requests[asked:] for name in scripted.scripts
                   if f"def {name}(" in r.task_function}
    assert len(asked_again) == 1 and tasks[1].entry_point not in asked_again  # never another shard's task
    assert read_manifest(results.with_suffix(".json"))["shards"] == ["1/2"]

    assert _bench(out, "--shard", "2/2") == 0  # the other shard, run into the same folder
    assert len(read_records(results)) == 3
    assert read_manifest(results.with_suffix(".json"))["shards"] == ["1/2", "2/2"]


def test_shards_run_with_different_settings_are_not_merged(
        endpoint: FakeOpenAI, scripted: ScriptedModel, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    endpoint.responder = scripted
    assert _bench(tmp_path / "a", "--shard", "1/2", limit=2) == 0
    assert main(["bench", "humaneval", "--limit", "2", "--max-attempts", "2", "--shard", "2/2",
                 "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()

    folders = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["bench", "merge", *folders, "--out", str(tmp_path / "m")]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("pycapsule bench: refusing to merge different configurations of humaneval ")
    assert "generation.max_attempts (3 against 2)" in line
    assert not (tmp_path / "m").exists()


def test_workers_n_against_an_endpoint_sends_n_requests_at_once(
        endpoint: FakeOpenAI, tasks: list[BenchTask], tmp_path: Path) -> None:
    at_once = threading.Barrier(3, timeout=20)  # broken (test fails) unless 3 requests are in flight at once
    arrived = itertools.count()
    answers = {t.entry_point: f"```python\n{t.reference}```" for t in tasks}

    def answer(request: RecordedRequest) -> Text:
        if next(arrived) < 3:
            at_once.wait()  # the first three requests are answered only once all three have arrived
        name = next(name for name in answers if f"def {name}(" in request.task_function)
        return Text(answers[name])

    endpoint.responder = answer
    assert main(["bench", "humaneval", "--limit", "3", "--mode", "direct", "--workers", "3",
                 "--out", str(tmp_path / "r")]) == 0

    assert not at_once.broken
    assert len(endpoint.chat_requests) == 3
    assert {r.status for r in read_records(next((tmp_path / "r").glob("*.jsonl"))).values()} == {"passed"}
