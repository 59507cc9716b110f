"""README's headline figures describe the product as shipped: the runs it links were made with the loop
settings a user gets by default, and the figures it quotes are those runs' own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import DEFAULTS
from pycapsule.debugging.iterator_examples import iterator_examples

from tests.datasets import tasks_of

ROOT = Path(__file__).parents[2]
LOOP_SETTINGS = ("max_attempts", "restart_after", "history_window", "temperature", "retry_temperature",
                 "max_tokens", "job_timeout")


def headline() -> str:
    """The README paragraph that quotes pass@1 figures."""
    paragraphs = (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")
    [paragraph] = [p for p in paragraphs if "HumanEval tasks" in p and "→" in p]
    return paragraph


def linked_reports() -> list[Path]:
    return [ROOT / link for link in re.findall(r"\]\((docs/results/[^)\s]+/report\.md)\)", headline())]


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


def test_iterator_examples_change_no_humaneval_task_so_runs_made_before_them_still_describe_it() -> None:
    """The 0.5B headline run predates iterator examples (docs/generate.md#iterator-examples): it describes
    the product as shipped only while no HumanEval task has an iterable parameter for them to act on."""
    assert DEFAULTS.iterator_examples
    acted_on = [task.task_id for task in tasks_of("humaneval")
                if iterator_examples(capsule_by_qualname(task.prompt, task.entry_point)) is not None]
    assert acted_on == []


@pytest.mark.parametrize("report", linked_reports(), ids=lambda report: report.parent.name)
def test_every_figure_the_headline_quotes_for_a_model_is_in_its_report(report: Path) -> None:
    size = report.parent.name.removeprefix("qwen2.5-coder-").upper()
    quoted = re.search(rf"{re.escape(size)}[^0-9]*([\d.]+) → ([\d.]+)", headline())
    assert quoted is not None, f"no figures quoted for {size}"
    text = report.read_text(encoding="utf-8")
    for figure in quoted.groups():
        assert re.search(rf"\b{re.escape(figure)}\b", text), (figure, report)
