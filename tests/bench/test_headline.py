"""The headline figures (docs/results/README.md's "Current figures", one link from README's first screen)
describe the product as shipped: the runs they link were made with the loop settings a user gets by default,
and the figures quoted are those runs' own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pycapsule.bench.identity import generation_settings
from pycapsule.config import DEFAULTS

ROOT = Path(__file__).parents[2]
RESULTS = ROOT / "docs" / "results" / "README.md"
LOOP_SETTINGS = ("max_attempts", "restart_after", "history_window", "temperature", "retry_temperature",
                 "max_tokens", "job_timeout")


def headline() -> str:
    """The paragraph of the current figures that quotes HumanEval pass@1."""
    current = RESULTS.read_text(encoding="utf-8").split("## Current figures\n", 1)[1].split("\n## ", 1)[0]
    [paragraph] = [p for p in current.split("\n\n") if "HumanEval tasks" in p and "→" in p]
    return paragraph


def linked_reports() -> list[Path]:
    return [RESULTS.parent / link for link in re.findall(r"\]\(([^)\s]+/report\.md)\)", headline())]


def test_readme_links_the_current_figures() -> None:
    first_screen = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quick start", 1)[0]
    assert "(docs/results/README.md#current-figures)" in first_screen
    assert RESULTS.read_text(encoding="utf-8").split("\n## ", 2)[1].startswith("Current figures\n")


def selfdebug_manifests(report: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(report.parent.glob("humaneval-selfdebug-*.json"))]


def test_the_headline_links_the_report_of_each_embedded_model() -> None:
    reports = linked_reports()
    assert [report.parent.name for report in reports] == ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
    assert all(report.is_file() and selfdebug_manifests(report) for report in reports)


@pytest.mark.parametrize("report", linked_reports(), ids=lambda report: report.parent.name)
def test_the_headline_runs_used_the_shipped_loop_settings(report: Path) -> None:
    for manifest in selfdebug_manifests(report):
        generation = manifest["config"]["generation"]
        used = {key: generation[key] for key in LOOP_SETTINGS}
        assert used == {key: getattr(DEFAULTS, key) for key in LOOP_SETTINGS}, manifest["command"]


@pytest.mark.parametrize("report", linked_reports(), ids=lambda report: report.parent.name)
def test_the_headline_runs_used_todays_prompts_loop_iterator_examples_prompt_cache_and_prefill(
        report: Path) -> None:
    """The fingerprints change with the message templates, how module context is shown, the loop's
    retry rules and the iterator examples; the prompt cache changes what a sampled retry answers, and the
    answer prefill what a first answer is: a change to any of them makes the headline a past product's."""
    today = generation_settings(DEFAULTS, "selfdebug")
    keys = ("prompt", "loop", "iterator_examples", "prompt_cache", "answer_prefill", "prefilled_answers")
    for manifest in selfdebug_manifests(report):
        generation = manifest["config"]["generation"]
        used = {key: generation.get(key) for key in keys}
        assert used == {key: today.get(key) for key in used}, manifest["command"]


@pytest.mark.parametrize("report", linked_reports(), ids=lambda report: report.parent.name)
def test_every_figure_the_headline_quotes_for_a_model_is_in_its_report(report: Path) -> None:
    size = report.parent.name.removeprefix("qwen2.5-coder-").upper()
    quoted = re.search(rf"{re.escape(size)}[^0-9]*([\d.]+) → ([\d.]+)", headline())
    assert quoted is not None, f"no figures quoted for {size}"
    text = report.read_text(encoding="utf-8")
    for figure in quoted.groups():
        assert re.search(rf"\b{re.escape(figure)}\b", text), (figure, report)
