"""Shards and `pycapsule bench merge`, on records written by hand: which tasks a shard takes, what a
manifest says it holds, and how the folders of one run split across machines are joined (or refused).
The end-to-end version, with real runs against the scripted model, is test_bench_across_machines.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from pycapsule.__main__ import main
from pycapsule.bench.merge import MergeError, merge_folders, unsharded_command
from pycapsule.bench.portable import portable_command
from pycapsule.bench.records import (
    RECORDS_KEY,
    RecordWriter,
    RunFiles,
    TaskRecord,
    read_manifest,
    read_records,
    write_manifest,
)
from pycapsule.bench.report import write_report
from pycapsule.bench.shards import Shard, held_shards, parse_shard

CONFIG = {"dataset": "humaneval", "data_sha256": "d", "tasks_sha256": "t",
          "generation": {"mode": "selfdebug", "max_attempts": 3, "temperature": 0.0}}


def _record(number: int, status: str = "passed", detail: str = "") -> TaskRecord:
    return TaskRecord(f"T/{number}", f"prompt {number}", status, detail=detail, outcome="passed", attempts=1,
                      model_calls=1)


def _shard_folder(folder: Path, records: list[TaskRecord], *, shards: list[str] | None, config: dict = CONFIG,
                  **manifest: object) -> RunFiles:
    """A folder as `pycapsule bench --shard I/N --out folder` leaves it on one machine."""
    files = RunFiles.of(folder, "humaneval", "selfdebug", config)
    fields = {"config": config, "model_label": "m", "total_tasks": 5, "wall_seconds": 10.0,
              "started": "2026-01-02 10:00 UTC", "updated": "2026-01-02 11:00 UTC", "commit": "abc123",
              "sandbox": "bwrap", "command": f"pycapsule bench humaneval --limit 5 --out {folder}"}
    fields.update(manifest)
    if shards is not None:
        fields["shards"] = shards
        fields["command"] += f" --shard {shards[0]}"
    write_manifest(files.manifest, fields)
    writer = RecordWriter(files.results)
    for record in records:
        writer.write(record)
    writer.close()
    return files


def test_shard_i_of_n_takes_every_nth_task_from_the_ith_and_the_shards_cover_each_task_once() -> None:
    tasks = list(range(1, 8))
    assert Shard(1, 3).select(tasks) == [1, 4, 7]
    assert Shard(3, 3).select(tasks) == [3, 6]
    assert sorted(t for i in range(1, 4) for t in Shard(i, 3).select(tasks)) == tasks
    assert Shard(1, 1).select(tasks) == tasks
    assert Shard(9, 9).select(tasks) == []  # more shards than tasks: an empty shard, not an error


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "-1/2", ""])
def test_a_bad_shard_is_refused_with_the_expected_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected I/N with 1 <= I <= N"):
        parse_shard(text)
    assert parse_shard(" 2/3 ") == Shard(2, 3)


def test_a_bad_shard_on_the_command_line_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "humaneval", "--shard", "3/2"]) == 2
    assert "argument --shard: expected I/N with 1 <= I <= N (e.g. 1/2: the first of two shards) or auto/N: " \
           "not '3/2'" in capsys.readouterr().err


@pytest.mark.parametrize(("environ", "shard"), [
    ({"JOB_COMPLETION_INDEX": "0"}, Shard(1, 4)),  # a Kubernetes Indexed Job counts from 0
    ({"JOB_COMPLETION_INDEX": "3"}, Shard(4, 4)),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5"}, Shard(3, 4)),  # sbatch --array=5-8
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0"}, Shard(1, 4)),
])
def test_auto_takes_the_shard_index_from_the_scheduler_that_started_the_run(
        environ: dict[str, str], shard: Shard) -> None:
    assert parse_shard("auto/4", environ) == shard


@pytest.mark.parametrize(("environ", "says"), [
    ({}, "neither is set here"),
    ({"JOB_COMPLETION_INDEX": "4"}, "the scheduler's index makes it 5/4"),  # a Job of more completions
    ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_MIN": "0"}, "not a task index"),
])
def test_auto_without_a_usable_index_is_refused_in_one_sentence(environ: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_shard("auto/4", environ)


def test_a_manifest_holds_the_shards_that_ran_into_it_or_the_whole_run() -> None:
    assert held_shards(None, Shard(2, 3)) == ["2/3"]
    assert held_shards({"shards": ["2/3"]}, Shard(1, 3)) == ["1/3", "2/3"]
    assert held_shards({"shards": ["1/3"]}, Shard(1, 3)) == ["1/3"]  # a rerun (resume) of the same shard
    assert held_shards({"shards": ["1/3"]}, None) is None  # an unsharded run makes it whole
    assert held_shards({"config": {}}, Shard(1, 3)) is None  # a folder already holding the whole run


def test_two_shard_folders_merge_into_one_run_with_all_records_and_the_shards_union(tmp_path: Path) -> None:
    a = _shard_folder(tmp_path / "a", [_record(1), _record(3, "failed"), _record(5)], shards=["1/2"])
    b = _shard_folder(tmp_path / "b", [_record(2), _record(4, "failed")], shards=["2/2"], wall_seconds=30.0,
                      commit="def456", started="2026-01-02 09:00 UTC")
    out = tmp_path / "merged"

    [merged] = merge_folders([tmp_path / "a", tmp_path / "b"], out)

    assert (merged.run, merged.records, merged.total_tasks, merged.duplicates, merged.shards) == (
        a.manifest.stem, 5, 5, 0, ["1/2", "2/2"])
    records = read_records(out / a.results.name)
    assert {tid: r.status for tid, r in records.items()} == {
        "T/1": "passed", "T/2": "passed", "T/3": "failed", "T/4": "failed", "T/5": "passed"}
    manifest = read_manifest(out / a.manifest.name)
    assert manifest is not None and manifest["config"] == CONFIG and manifest["shards"] == ["1/2", "2/2"]
    assert manifest["wall_seconds"] == 30.0  # side by side: the longest shard
    assert manifest["started"] == "2026-01-02 09:00 UTC" and manifest["commit"] == "abc123 + def456"
    assert manifest["command"] == portable_command(f"pycapsule bench humaneval --limit 5 --out {out}")
    assert [part["shards"] for part in manifest["merged_from"]] == [["1/2"], ["2/2"]]
    assert read_records(b.results) == {r.task_id: r for r in [_record(2), _record(4, "failed")]}  # untouched


def test_on_a_task_in_several_folders_the_folder_named_first_wins(tmp_path: Path) -> None:
    _shard_folder(tmp_path / "a", [_record(1, "failed", "from a"), _record(3)], shards=["1/2"])
    files = _shard_folder(tmp_path / "b", [_record(1, "passed", "from b"), _record(2)], shards=["2/2"])

    [merged] = merge_folders([tmp_path / "b", tmp_path / "a"], tmp_path / "out")

    assert merged.duplicates == 1 and merged.records == 3
    assert read_records(tmp_path / "out" / files.results.name)["T/1"].detail == "from b"


def test_merging_into_a_folder_that_is_also_a_source_keeps_its_records(tmp_path: Path) -> None:
    a = _shard_folder(tmp_path / "a", [_record(1), _record(3)], shards=["1/2"])
    _shard_folder(tmp_path / "b", [_record(2)], shards=["2/2"])
    merge_folders([tmp_path / "a", tmp_path / "b"], tmp_path / "a")
    _shard_folder(tmp_path / "c", [_record(4)], shards=["2/2"])  # shard 2 resumed elsewhere, copied back

    [merged] = merge_folders([tmp_path / "a", tmp_path / "c"], tmp_path / "a")

    assert sorted(read_records(a.results)) == ["T/1", "T/2", "T/3", "T/4"]
    assert merged.shards == ["1/2", "2/2"]
    assert len(read_manifest(a.manifest)["merged_from"]) == 3  # a, b, then c: each part once


def test_the_output_folders_own_copy_of_the_run_counts_last_and_is_never_lost(tmp_path: Path) -> None:
    files = _shard_folder(tmp_path / "out", [_record(1, "failed", "older"), _record(9)], shards=["1/2"])
    _shard_folder(tmp_path / "a", [_record(1, "passed", "newer")], shards=["1/2"])

    merge_folders([tmp_path / "a"], tmp_path / "out")

    records = read_records(files.results)
    assert records["T/1"].detail == "newer" and "T/9" in records


def test_a_published_shard_is_read_from_its_gzipped_records(tmp_path: Path) -> None:
    files = _shard_folder(tmp_path / "a", [_record(1), _record(3)], shards=["1/2"])
    packed = tmp_path / "records" / files.results.with_suffix(".jsonl.gz").name
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(files.results.read_bytes()))
    files.results.unlink()
    manifest = read_manifest(files.manifest)
    write_manifest(files.manifest, {**manifest, RECORDS_KEY: f"../records/{packed.name}"})
    _shard_folder(tmp_path / "b", [_record(2)], shards=["2/2"])

    merge_folders([tmp_path / "a", tmp_path / "b"], tmp_path / "out")

    assert sorted(read_records(tmp_path / "out" / files.results.name)) == ["T/1", "T/2", "T/3"]
    assert RECORDS_KEY not in read_manifest(tmp_path / "out" / files.manifest.name)


def test_a_shard_and_the_whole_run_merge_into_the_whole_run(tmp_path: Path) -> None:
    _shard_folder(tmp_path / "a", [_record(1)], shards=["1/2"])
    _shard_folder(tmp_path / "b", [_record(1), _record(2)], shards=None)
    [merged] = merge_folders([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert merged.shards is None and merged.records == 2


def test_different_configurations_of_one_dataset_and_mode_are_refused_and_nothing_is_written(
        tmp_path: Path) -> None:
    _shard_folder(tmp_path / "a", [_record(1)], shards=["1/2"])
    other = {**CONFIG, "generation": {**CONFIG["generation"], "temperature": 0.2}}
    _shard_folder(tmp_path / "b", [_record(2)], shards=["2/2"], config=other)

    with pytest.raises(MergeError) as refused:
        merge_folders([tmp_path / "a", tmp_path / "b"], tmp_path / "out")

    message = str(refused.value)
    assert message.startswith("refusing to merge different configurations of humaneval selfdebug: ")
    assert "generation.temperature (0.0 against 0.2)" in message
    assert message.endswith("; only shards of one run (same settings, model, prompts and dataset) can be "
                            "merged")
    assert not (tmp_path / "out").exists()


def test_missing_folders_and_folders_without_runs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="is not a folder of bench results"):
        merge_folders([tmp_path / "nowhere"], tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MergeError, match="no bench run"):
        merge_folders([tmp_path / "empty"], tmp_path / "out")


def test_the_merge_command_writes_the_report_and_says_what_it_joined(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _shard_folder(tmp_path / "a", [_record(1), _record(3, "failed"), _record(5)], shards=["1/2"])
    _shard_folder(tmp_path / "b", [_record(2), _record(4, "failed")], shards=["2/2"])
    out = tmp_path / "merged"

    assert main(["bench", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0

    assert f"{files.manifest.stem}: 5/5 tasks (shards 1/2, 2/2)" in capsys.readouterr().out
    assert "| **60.0** | 3/5 |" in (out / "report.md").read_text()


def test_the_merge_command_refuses_run_options_and_a_missing_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "merge", str(tmp_path), "--out", str(tmp_path / "o"), "--shard", "1/2"]) == 2
    assert "merge takes only folders and --out, not --shard" in capsys.readouterr().err
    assert main(["bench", "merge", str(tmp_path)]) == 2
    assert "merge needs the folders to join and --out DIR" in capsys.readouterr().err
    assert main(["bench", "humaneval", str(tmp_path)]) == 2
    assert "only `pycapsule bench merge` takes folders" in capsys.readouterr().err


def test_the_merged_command_is_the_whole_runs() -> None:
    assert unsharded_command("pycapsule bench mbpp --shard 2/4 --workers 3 --out r-2", Path("all")) == (
        "pycapsule bench mbpp --workers 3 --out all")
    assert unsharded_command("pycapsule bench 'unclosed", Path("x")) == "pycapsule bench 'unclosed"


def test_the_merged_run_names_every_model_thread_count_its_shards_ran_on(tmp_path: Path) -> None:
    """Greedy answers can differ between thread counts: a run made on several says so."""
    _shard_folder(tmp_path / "a", [_record(1)], shards=["1/3"], model_threads=[2])
    _shard_folder(tmp_path / "b", [_record(2)], shards=["2/3"], model_threads=[1, 2])
    _shard_folder(tmp_path / "c", [_record(3)], shards=["3/3"])  # reused generations only: no count

    [merged] = merge_folders([tmp_path / "a", tmp_path / "b", tmp_path / "c"], tmp_path / "merged")

    manifest = read_manifest(tmp_path / "merged" / f"{merged.run}.json")
    assert manifest is not None and manifest["model_threads"] == [1, 2]
    assert "model threads 1, 2; " in write_report(tmp_path / "merged").read_text()


def test_the_merged_run_names_the_library_versions_and_pythons_its_shards_ran_with(tmp_path: Path) -> None:
    _shard_folder(tmp_path / "a", [_record(1)], shards=["1/2"], sandbox_python="3.11.7",
                  sandbox_libraries={"pandas": "pandas 2.0.3"})
    _shard_folder(tmp_path / "b", [_record(2)], shards=["2/2"], sandbox_python="3.11.9",
                  sandbox_libraries={"pandas": "pandas 2.1.0", "numpy": "numpy 1.23.5"})

    [merged] = merge_folders([tmp_path / "a", tmp_path / "b"], tmp_path / "merged")

    manifest = read_manifest(tmp_path / "merged" / f"{merged.run}.json")
    assert manifest is not None and manifest["sandbox_python"] == "3.11.7 + 3.11.9"
    assert manifest["sandbox_libraries"] == {"numpy": "numpy 1.23.5", "pandas": "pandas 2.0.3 | pandas 2.1.0"}
    report = write_report(tmp_path / "merged").read_text()
    assert ("(Python 3.11.7 + 3.11.9; the tasks' libraries: numpy (numpy 1.23.5), "
            "pandas (pandas 2.0.3 | pandas 2.1.0))") in report
