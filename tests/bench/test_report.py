"""The summary and report computed from per-task records (records written here by hand)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pycapsule.bench.records import (
    RecordWriter,
    RunFiles,
    TaskRecord,
    config_hash,
    read_records,
    write_manifest,
)
from pycapsule.bench.report import write_report
from pycapsule.bench.summary import summarize


def _record(task_id: str, status: str, codes: list[str], headlines: list[str], detail: str = "",
            outcome: str = "gave_up") -> TaskRecord:
    calls = len(codes)
    return TaskRecord(task_id, "k" + task_id, status, detail=detail, outcome=outcome, attempts=calls,
                      model_calls=calls, prompt_tokens=100 * calls, completion_tokens=50 * calls,
                      headlines=headlines, codes=codes)


RECORDS = [
    _record("T/1", "passed", ["a"], ["passed"], outcome="passed"),
    _record("T/2", "passed", ["b", "c"], ["doctest failed: f(1) expected 2, got 3", "passed"],
            outcome="passed"),
    _record("T/3", "failed", ["d", "d", "d"], ["doctest failed: f(2) expected 1, got 0"] * 3,
            detail="AssertionError: input #3"),
    _record("T/4", "failed", ["e"], ["not_verified"], detail="killed after 20.0 s wall-clock limit",
            outcome="not_verified"),
    _record("T/5", "unscorable", [], [], detail="needs pandas", outcome="skipped"),
]


def test_summary_counts_pass_rate_over_scored_tasks_and_the_evidence_for_failures() -> None:
    manifest = {"config": {"dataset": "humaneval", "generation": {"mode": "selfdebug", "max_attempts": 3}},
                "model_label": "m", "total_tasks": 6}
    summary = summarize(manifest, {r.task_id: r for r in RECORDS})
    assert (summary.passed, summary.scored, summary.unscorable, summary.done) == (2, 4, 1, 5)
    assert summary.pass_at_1 == 50.0 and not summary.complete
    assert summary.attempts_of_passed == {1: 1, 2: 1}
    assert summary.mean_model_calls == 7 / 4 and summary.mean_prompt_tokens == 175.0
    assert summary.diagnosis.hidden_failures == {"AssertionError": 1, "killed": 1}
    assert summary.diagnosis.last_verdicts == {"doctest failed": 1, "no examples to run": 1}
    diagnosis = summary.diagnosis
    assert (diagnosis.retries, diagnosis.repeated, diagnosis.gained_by_retry) == (3, 2, 1)
    assert (summary.called_passed, summary.called_passed_right, summary.precision) == (2, 2, 100.0)
    assert summary.visible_vs_hidden == {"examples failed, hidden failed": 1,
                                         "examples passed, hidden passed": 2,
                                         "no examples to run, hidden failed": 1}


def test_the_report_lists_every_run_in_the_folder_with_its_provenance(tmp_path: Path) -> None:
    for mode, records in (("direct", RECORDS[:1] + RECORDS[2:4]), ("selfdebug", RECORDS)):
        config = {"dataset": "humaneval", "generation": {"mode": mode, "max_attempts": 3}}
        files = RunFiles.of(tmp_path, "humaneval", mode, config)
        write_manifest(files.manifest, {"config": config, "model_label": "m", "total_tasks": 5,
                                        "command": f"pycapsule bench humaneval --mode {mode}",
                                        "model_sha256": "ab" * 32, "generation_hash": config_hash(config)})
        writer = RecordWriter(files.results)
        for record in records:
            writer.write(record)
        writer.close()
        assert read_records(files.results).keys() == {r.task_id for r in records}
    report = write_report(tmp_path).read_text()
    assert "| m | humaneval | direct | 3/5 (partial) | **33.3** | 1/3 |" in report
    # compared over the three tasks both runs scored: the selfdebug run's calls over those (1 + 3 + 1) / 3
    assert "| m | humaneval | selfdebug ≤3, restart after ? fixes | 3 | 33.3 | 33.3 | +0.0 | 1.67 |" in report
    assert "`pycapsule bench humaneval --mode selfdebug`; model file SHA-256 `" + "ab" * 32 in report
    assert (tmp_path / "pass_at_1.png").is_file() and (tmp_path / "attempts.png").is_file()


def test_a_report_without_plots_draws_none_and_shows_none(tmp_path: Path) -> None:
    config = {"dataset": "humaneval", "generation": {"mode": "direct", "max_attempts": 1}}
    files = RunFiles.of(tmp_path, "humaneval", "direct", config)
    write_manifest(files.manifest, {"config": config, "model_label": "m", "total_tasks": 1})
    writer = RecordWriter(files.results)
    writer.write(RECORDS[0])
    writer.close()
    report = write_report(tmp_path, plots=False).read_text()
    assert "| m | humaneval | direct | 1/1 | **100.0** | 1/1 |" in report
    assert "## Plots" not in report and not list(tmp_path.glob("*.png"))


def test_ending_on_examples_the_sandbox_cannot_run_is_told_apart_from_having_no_examples() -> None:
    lacking = _record("T/6", "passed", ["f"], ["examples cannot run in the sandbox (1 of 1): `f()` needs the "
                                               "network"], outcome="not_verified")
    manifest = {"config": {"dataset": "bigcodebench", "generation": {"mode": "selfdebug", "max_attempts": 3}},
                "model_label": "m", "total_tasks": 2}
    summary = summarize(manifest, {r.task_id: r for r in (RECORDS[3], lacking)})
    assert summary.visible_vs_hidden == {"examples cannot run here, hidden passed": 1,
                                         "no examples to run, hidden failed": 1}


def test_time_to_a_passing_body_counts_only_the_bodies_that_passed_the_examples(tmp_path: Path) -> None:
    # passed the docstring's examples, not pycapsule's iterator examples: applied, no passed attempt
    weak_examples = _record("T/7", "failed", ["g"], ["fails with an iterator for `iterable`: g(iter([]))"],
                            detail="AssertionError", outcome="passed")
    records = [replace(RECORDS[0], passed_attempt=1, generation_seconds=4.0),
               replace(RECORDS[1], passed_attempt=2, generation_seconds=10.0),
               replace(RECORDS[2], generation_seconds=30.0),
               replace(weak_examples, generation_seconds=6.0)]
    config = {"dataset": "realcode", "generation": {"mode": "selfdebug", "max_attempts": 3}}
    summary = summarize({"config": config, "model_label": "m", "total_tasks": 4},
                        {r.task_id: r for r in records})
    assert summary.median_seconds_to_examples_pass == 6.0
    assert summary.median_seconds_to_hidden_pass == 7.0

    files = RunFiles.of(tmp_path, "realcode", "selfdebug", config)
    write_manifest(files.manifest, {"config": config, "model_label": "m", "total_tasks": 4})
    writer = RecordWriter(files.results)
    for record in records:
        writer.write(record)
    writer.close()
    assert "| 3 | 6.0 | 2 | 7.0 |" in write_report(tmp_path, plots=False).read_text()


def test_a_run_without_a_passing_body_has_no_time_to_one() -> None:
    manifest = {"config": {"dataset": "humaneval", "generation": {"mode": "direct", "max_attempts": 1}},
                "model_label": "m", "total_tasks": 1}
    summary = summarize(manifest, {"T/3": RECORDS[2]})
    assert summary.median_seconds_to_examples_pass is None and summary.median_seconds_to_hidden_pass is None
