"""`pycapsule generate` in real projects, with the scripted model: a body that needs the module's relative
import and helper passes; a module that cannot be imported for reasons outside the target stops before
any model call; examples that are all skipped verify nothing; stubs under compound statements work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.projects import builders
from tests.projects.cli import check_json, generate_json, outcomes

GROSS = "```python\ndef gross(net):\n    return _round_money(net * (1 + TAX))\n```"


def test_a_body_using_a_relative_import_and_a_module_helper_passes(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = builders.package_with_relative_imports(project)
    module.write_text(builders.pricing_stub())
    fake.queue(GROSS)
    code, report, stderr = generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write")
    results = [(r["qualname"], r["status"], r["attempts"]) for r in report["results"]]
    assert results == [("gross", "passed", 1)]
    assert code == 0, stderr
    assert module.read_text() == builders.pricing_stub().replace(
        "    ...\n", "    return _round_money(net * (1 + TAX))\n")
    assert len(fake.chat_requests) == 1
    checked, after = check_json(str(module), tmp_path)
    assert (outcomes(after), checked) == ({"gross": "passed", "twice_gross": "passed"}, 0)


@pytest.mark.parametrize("kind", sorted(builders.IMPORT_FAILURE_LINE))
@pytest.mark.parametrize("target", ["{module}::area", "{module}"], ids=["one function", "whole file"])
def test_a_module_that_cannot_be_imported_stops_before_any_model_call(
        tmp_path: Path, project: Path, fake: FakeOpenAI, kind: str, target: str) -> None:
    module = builders.import_fails_outside_the_target(project, kind)
    before = module.read_text()
    code, report, stderr = generate_json(target.format(module=module), tmp_path, fake.base_url, "--write")
    assert fake.chat_requests == [], "the model cannot fix the module's other code: it must not be asked"
    assert code != 0 and module.read_text() == before
    [result] = report["results"]
    assert result["status"] == "error" and result["attempts"] == 0
    message = result["message"]
    line = builders.IMPORT_FAILURE_LINE[kind]
    assert "\n" not in message and (f"line {line}" in message or f"mod.py:{line}" in message), message
    cause = {"missing package": "surely_not_installed_pkg_3141", "top-level raise": "KeyError"}[kind]
    assert cause in message, message
    assert message in stderr


def test_a_body_whose_examples_are_all_skipped_is_not_verified(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = builders.only_skipped_examples(project)
    fake.queue("```python\ndef parse_date(text):\n    return None\n```")
    code, report, stderr = generate_json(f"{module}::parse_date", tmp_path, fake.base_url)
    [result] = report["results"]
    assert result["status"] == "not_verified", result
    assert code != 0 and not report["passed"], stderr


def test_stubs_under_compound_statements_and_in_a_class_are_generated(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = builders.compound_stubs(project)
    fake.queue("```python\ndef triple(x):\n    return 3 * x\n```",
               "```python\ndef negate(x):\n    return -x\n```",
               "```python\ndef doubled(self, n):\n    return 2 * n\n```")
    code, report, stderr = generate_json(str(module), tmp_path, fake.base_url, "--write")
    assert [(r["qualname"], r["status"]) for r in report["results"]] == [
        ("triple", "passed"), ("negate", "passed"), ("Counter.doubled", "passed")], stderr
    assert code == 0
    checked, after = check_json(str(module), tmp_path)
    assert (outcomes(after), checked) == (
        {"triple": "passed", "negate": "passed", "Counter.doubled": "passed"}, 0)
