"""`pycapsule generate` shows a diff; `generate --write` after it, on the same file with the same settings,
writes exactly that diff without asking the model again. Any change to the file or the settings since makes
it a new run, and says so."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.projects import builders
from tests.projects.cli import generate_json

GROSS = "```python\ndef gross(net):\n    return _round_money(net * (1 + TAX))\n```"
GROSS_TOO = "```python\ndef gross(net):\n    return _round_money(net + net * TAX)\n```"


def stub(project: Path) -> Path:
    module = builders.package_with_relative_imports(project)
    module.write_text(builders.pricing_stub())
    return module


def test_write_after_a_preview_writes_that_diff_without_asking_the_model(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(GROSS, GROSS_TOO)
    code, shown, _ = generate_json(f"{module}::gross", tmp_path, fake.base_url)
    assert (code, shown["written"], len(fake.chat_requests)) == (0, False, 1)
    assert module.read_text() == builders.pricing_stub()

    code, written, stderr = generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write")

    assert len(fake.chat_requests) == 1, "the model was asked again"
    assert "no model is asked" in stderr
    assert (code, written["written"], written["diff"]) == (0, True, shown["diff"])
    assert written["results"] == shown["results"]
    assert "return _round_money(net * (1 + TAX))" in module.read_text()


def test_a_file_changed_since_the_preview_is_run_again_and_said(
        tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(GROSS, GROSS_TOO)
    generate_json(f"{module}::gross", tmp_path, fake.base_url)
    module.write_text(module.read_text() + "\n# a line the user added after looking at the diff\n")

    code, _, stderr = generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write")

    assert len(fake.chat_requests) == 2
    assert "changed since the run of" in stderr and "running again" in stderr
    assert code == 0 and "return _round_money(net + net * TAX)" in module.read_text()


def test_other_settings_are_another_run(tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(GROSS, GROSS_TOO)
    generate_json(f"{module}::gross", tmp_path, fake.base_url)
    generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write", "--max-attempts", "1")
    assert len(fake.chat_requests) == 2


def test_a_preview_is_written_once(tmp_path: Path, project: Path, fake: FakeOpenAI) -> None:
    module = stub(project)
    fake.queue(GROSS, GROSS_TOO, GROSS)
    generate_json(f"{module}::gross", tmp_path, fake.base_url)
    generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write")
    module.write_text(builders.pricing_stub())  # the user undoes it and asks again
    generate_json(f"{module}::gross", tmp_path, fake.base_url, "--write")
    assert len(fake.chat_requests) == 2
