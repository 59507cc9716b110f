"""The report of a results folder: `report.md` (tables) and PNG plots, rebuilt from the per-task records.

Every run in the folder (one manifest + its records per configuration; see `records.results_of`) is one
row, so direct and self-debugging runs of the same model sit side by side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pycapsule.bench.records import (
    MODEL_THREADS_KEY,
    SANDBOX_LIBRARIES_KEY,
    SANDBOX_PYTHON_KEY,
    read_manifest,
    read_records,
    results_of,
)
from pycapsule.bench.summary import RunSummary, summarize

ATTEMPTS_PLOT = "attempts.png"
PASS_PLOT = "pass_at_1.png"
SUMMARY = "summary.json"
"""The report's figures per run, for scripts (written beside report.md)."""


def load_runs(out: Path) -> list[RunSummary]:
    runs = []
    for manifest_path in sorted(out.glob("*.json")):
        manifest = read_manifest(manifest_path)
        if manifest is None or "config" not in manifest:
            continue
        runs.append(summarize(manifest, read_records(results_of(manifest_path, manifest))))
    return sorted(runs, key=lambda r: (r.model, r.dataset, r.mode != "direct", r.max_attempts))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _summary_table(runs: list[RunSummary]) -> list[str]:
    lines = [
        "| model | dataset | mode | tasks done | pass@1 | passed / scored | unscorable "
        "| attempts / task | model calls / task | prompt tokens / task | completion tokens / task "
        "| seconds / task | wall time |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        done = f"{r.done}/{r.total_tasks}" + ("" if r.complete else " (partial)")
        lines.append(
            f"| {r.model} | {r.dataset} | {r.label} | {done} | **{r.pass_at_1:.1f}** "
            f"| {r.passed}/{r.scored} | {r.unscorable} | {r.mean_attempts:.2f} "
            f"| {r.mean_model_calls:.2f} | {r.mean_prompt_tokens:.0f} "
            f"| {r.mean_completion_tokens:.0f} | {r.mean_task_seconds:.1f} | {_minutes(r.wall_seconds)} |"
        )
    return lines


def _precision_table(runs: list[RunSummary]) -> list[str]:
    """What "passed" promised: of the bodies pycapsule called passed, how many the hidden tests pass."""
    lines = ["", "The precision of \"passed\": of the bodies pycapsule called passed (their examples, and "
             "the project's tests it found, pass), the share that pass the hidden tests.", "",
             "| model | dataset | mode | called passed | pass the hidden tests too | precision |",
             "|---|---|---|---|---|---|"]
    for r in runs:
        precision = f"{r.precision:.0f} %" if r.precision is not None else "-"
        lines.append(f"| {r.model} | {r.dataset} | {r.label} | {r.called_passed} | {r.called_passed_right} "
                     f"| {precision} |")
    return lines


def _gain_table(runs: list[RunSummary]) -> list[str]:
    pairs = []
    for debug in runs:
        if debug.mode != "selfdebug":
            continue
        for direct in runs:
            if (direct.mode, direct.model, direct.dataset) == ("direct", debug.model, debug.dataset):
                pairs.append((direct, debug))
    if not pairs:
        return []
    lines = [
        "",
        "## Self-debugging against direct generation (same model, same prompt)",
        "",
        "Over the tasks both runs have scored (a run still in progress is compared on what it has done).",
        "",
        "| model | dataset | selfdebug | tasks compared | direct | selfdebug pass@1 | gain (points) "
        "| model calls / task |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for direct, debug in pairs:
        common = direct.scored_ids & debug.scored_ids
        if not common:
            continue
        before = 100.0 * len(direct.passed_ids & common) / len(common)
        after = 100.0 * len(debug.passed_ids & common) / len(common)
        lines.append(
            f"| {debug.model} | {debug.dataset} | {debug.label} | {len(common)} "
            f"| {before:.1f} | {after:.1f} | {after - before:+.1f} "
            f"| {debug.mean_model_calls_over(common):.2f} |"
        )
    return lines


def _attempt_table(runs: list[RunSummary]) -> list[str]:
    debug_runs = [r for r in runs if r.mode == "selfdebug"]
    if not debug_runs:
        return []
    width = max(r.max_attempts for r in debug_runs)
    lines = [
        "",
        "## Attempt at which tasks passed (hidden tests; the paper's Figure 2)",
        "",
        "| model | dataset | mode | " + " | ".join(f"attempt {k}" for k in range(1, width + 1)) + " |",
        "|---|---|---|" + "---|" * width,
    ]
    for r in debug_runs:
        cells = []
        for k in range(1, width + 1):
            count = r.attempts_of_passed.get(k, 0)
            share = 100.0 * count / r.passed if r.passed else 0.0
            cells.append(f"{count} ({share:.0f}%)")
        lines.append(f"| {r.model} | {r.dataset} | {r.label} | " + " | ".join(cells) + " |")
    return lines


def _contingency_table(runs: list[RunSummary]) -> list[str]:
    keys = sorted({key for r in runs for key in r.visible_vs_hidden})
    if not keys:
        return []
    lines = [
        "",
        "## The prompt's examples against the hidden tests (tasks)",
        "",
        "| model | dataset | mode | " + " | ".join(keys) + " |",
        "|---|---|---|" + "---|" * len(keys),
    ]
    for r in runs:
        lines.append(f"| {r.model} | {r.dataset} | {r.label} | "
                     + " | ".join(str(r.visible_vs_hidden.get(k, 0)) for k in keys) + " |")
    return lines


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _time_table(runs: list[RunSummary]) -> list[str]:
    lines = [
        "",
        "## Time to a passing body (seconds from the request, the model's start excluded)",
        "",
        "With more than one worker (`--workers`), a task's seconds include waiting while the embedded model "
        "answers another task's request: compare runs made with the same number of workers.",
        "",
        "| model | dataset | mode | bodies passing the examples | median s to one "
        "| of them passing the hidden tests | median s to one |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(f"| {r.model} | {r.dataset} | {r.label} | {len(r.seconds_to_examples_pass)} "
                     f"| {_seconds(r.median_seconds_to_examples_pass)} | {len(r.seconds_to_hidden_pass)} "
                     f"| {_seconds(r.median_seconds_to_hidden_pass)} |")
    return lines


def _diagnosis_table(runs: list[RunSummary]) -> list[str]:
    lines = [
        "",
        "## Where the failures come from (evidence for the notes)",
        "",
        "| model | dataset | mode | hidden tests raised | last attempt on the examples | retries "
        "| retries that repeated earlier code | tasks gained by a retry |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def counts(values: dict[str, int]) -> str:
        return ", ".join(f"{kind} {count}" for kind, count in values.items()) or "-"

    for r in runs:
        d = r.diagnosis
        lines.append(f"| {r.model} | {r.dataset} | {r.label} | {counts(d.hidden_failures)} "
                     f"| {counts(d.last_verdicts)} | {d.retries} | {d.repeated} | {d.gained_by_retry} |")
    return lines


def _lost_lines(runs: list[RunSummary]) -> list[str]:
    """Answers the loop got no function from, and whose loss each was (issue 51)."""
    lines = ["", "## Answers not parseable (no function of the target's name, or code that does not parse)",
             "",
             "Each one's raw reply searched again by a second, independent route (every fenced piece, every "
             "`def name(` block, parsed): a complete definition found there is pycapsule's loss, none is the "
             "model's own (bench/lost_answers.py).", ""]
    for r in runs:
        lost = r.lost
        where = f" ({', '.join(lost.as_json()['pycapsule_attempts'])})" if lost.count("pycapsule") else ""
        lines.append(f"- {r.model} / {r.dataset} / {r.label}: {lost.line()}{where}")
    return lines


def summary_json(runs: list[RunSummary]) -> dict[str, Any]:
    """The report's main figures per run, as `summary.json` holds them."""
    return {"runs": [{
        "model": r.model, "dataset": r.dataset, "mode": r.mode, "label": r.label, "tasks": r.total_tasks,
        "done": r.done, "scored": r.scored, "hidden_passed": r.passed, "pass_at_1": round(r.pass_at_1, 1),
        "examples_passed": r.called_passed, "model_calls_per_task": round(r.mean_model_calls, 2),
        "answers_not_parseable": r.lost.as_json(),
    } for r in runs]}


def _provenance(runs: list[RunSummary]) -> list[str]:
    lines = ["", "## How each run was made", ""]
    for r in runs:
        m = r.manifest
        lines.append(f"- **{r.model} / {r.dataset} / {r.label}**: `{m.get('command', '?')}`; "
                     f"model file SHA-256 `{m.get('model_sha256') or 'n/a (remote endpoint)'}`; "
                     f"data `{m.get('data_file', '?')}` "
                     f"(SHA-256 `{m.get('config', {}).get('data_sha256', '?')}`); "
                     f"started {m.get('started', '?')}, last updated {m.get('updated', '?')}; "
                     f"{_threads(m)}sandbox {m.get('sandbox', '?')}{_libraries(m)}; "
                     f"settings file {m.get('settings_file') or 'none'}; "
                     f"settings `{m.get('config', {}).get('generation', {})}`.")
    return lines


def _threads(manifest: dict[str, Any]) -> str:
    counts = manifest.get(MODEL_THREADS_KEY)
    if not isinstance(counts, list) or not counts:
        return ""
    return f"model threads {', '.join(str(count) for count in counts)}; "


def _libraries(manifest: dict[str, Any]) -> str:
    libraries = manifest.get(SANDBOX_LIBRARIES_KEY)
    if not isinstance(libraries, dict) or not libraries:
        return ""
    listed = ", ".join(f"{module} ({provided})" for module, provided in libraries.items())
    return f" (Python {manifest.get(SANDBOX_PYTHON_KEY, '?')}; the tasks' libraries: {listed})"


def render_markdown(runs: list[RunSummary], plots: list[str]) -> str:
    lines = ["# pycapsule bench results", ""]
    if not runs:
        return "\n".join([*lines, "No results yet.", ""])
    lines += [
        "pass@1 is over the scored tasks (unscorable ones, e.g. a missing third-party library, are left out "
        "and counted separately). Tokens and calls are per task, over the scored tasks. Rebuilt from the "
        "per-task records on every run.",
        "",
        *_summary_table(runs),
        *_precision_table(runs),
        *_gain_table(runs),
        *_attempt_table(runs),
        *_contingency_table(runs),
        *_time_table(runs),
        *_diagnosis_table(runs),
        *_lost_lines(runs),
        *_provenance(runs),
    ]
    if plots:
        lines += ["", "## Plots", "", *[f"![{name}]({name})" for name in plots]]
    return "\n".join(lines) + "\n"


def _plot_attempts(runs: list[RunSummary], path: Path) -> bool:
    from matplotlib.figure import Figure

    debug_runs = [r for r in runs if r.mode == "selfdebug" and r.passed]
    if not debug_runs:
        return False
    width = max(r.max_attempts for r in debug_runs)
    figure = Figure(figsize=(7, 4), layout="constrained")
    axes = figure.subplots()
    bar = 0.8 / len(debug_runs)
    for index, r in enumerate(debug_runs):
        xs = [k + (index - (len(debug_runs) - 1) / 2) * bar for k in range(1, width + 1)]
        shares = [100.0 * r.attempts_of_passed.get(k, 0) / r.passed for k in range(1, width + 1)]
        axes.bar(xs, shares, width=bar, label=f"{r.model} {r.dataset} ({r.label})")
    axes.set_xticks(range(1, width + 1))
    axes.set_xlabel("attempt at which the task passed")
    axes.set_ylabel("% of passed tasks")
    axes.set_title("When self-debugging succeeds")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=110)
    return True


def _plot_pass_at_1(runs: list[RunSummary], path: Path) -> bool:
    from matplotlib.figure import Figure

    if not runs:
        return False
    groups = sorted({(r.model, r.dataset) for r in runs})
    modes = sorted({r.label for r in runs})
    figure = Figure(figsize=(max(6, 1.4 * len(groups) + 2), 4), layout="constrained")
    axes = figure.subplots()
    bar = 0.8 / len(modes)
    for index, mode in enumerate(modes):
        values = []
        for model, dataset in groups:
            match = [r for r in runs if (r.model, r.dataset, r.label) == (model, dataset, mode)]
            values.append(match[-1].pass_at_1 if match else 0.0)
        xs = [g + (index - (len(modes) - 1) / 2) * bar for g in range(len(groups))]
        bars = axes.bar(xs, values, width=bar, label=mode)
        axes.bar_label(bars, fmt="%.1f", fontsize="small")
    labels = [f"{model}\n{dataset}" for model, dataset in groups]
    axes.set_xticks(range(len(groups)), labels, fontsize="small")
    axes.set_ylabel("pass@1 (%)")
    axes.set_ylim(0, 100)
    axes.set_title("pass@1: direct vs self-debugging")
    axes.legend()
    figure.savefig(path, dpi=110)
    return True


def write_report(out: Path, *, plots: bool = True) -> Path:
    """(Re)build `out/report.md` and, with `plots`, its plots and `summary.json` from every run recorded in
    `out`; returns the report's path. Without plots the report shows none (a published folder keeps no
    generated files)."""
    runs = load_runs(out)
    drawn = [name for name, draw in ((PASS_PLOT, _plot_pass_at_1), (ATTEMPTS_PLOT, _plot_attempts))
             if plots and draw(runs, out / name)]
    report = out / "report.md"
    report.write_text(render_markdown(runs, drawn), encoding="utf-8")
    if plots:  # a published folder holds manifests (every .json there is one) and report.md only
        (out / SUMMARY).write_text(json.dumps(summary_json(runs), indent=2) + "\n", encoding="utf-8")
    return report
