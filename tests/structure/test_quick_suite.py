"""The quick suite contributors run (docs/architecture.md, *Quick suite*) leaves out only declared markers
and needs nothing the `test` extra does not install; CI (tests/run.sh) still runs every test."""

from __future__ import annotations

import re
import tomllib

from tests.checkout import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def quick_command() -> str:
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("### Quick suite", 1)[1]
    [command] = re.findall(r"^python3 -m pytest .*$", section, re.MULTILINE)
    return command


def declared_markers() -> set[str]:
    return {marker.split(":")[0] for marker in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]}


def test_the_quick_suite_leaves_out_the_model_the_editors_and_the_slow_sweeps_all_declared() -> None:
    selection = re.search(r'-m "([^"]+)"', quick_command())
    assert selection is not None
    left_out = re.findall(r"\bnot (\w+)", selection.group(1))
    assert sorted(left_out) == ["editor", "model", "slow"]
    assert set(left_out) <= declared_markers()


def test_the_test_extra_installs_the_plugin_behind_the_parallel_option() -> None:
    if re.search(r"\s-n\s", quick_command()):
        assert any(re.match(r"pytest-xdist\b", requirement)
                   for requirement in PYPROJECT["project"]["optional-dependencies"]["test"])


def test_ci_runs_every_test_the_ones_that_must_run_alone_after_the_others() -> None:
    pytest_lines = [line for line in (ROOT / "tests" / "run.sh").read_text(encoding="utf-8").splitlines()
                    if "-m pytest" in line]
    selections = [re.findall(r'\s-m\s+"?([^"\s]+(?: [^"\s]+)*)"?', line.split("-m pytest", 1)[1])
                  for line in pytest_lines]
    assert selections == [["not alone"], ["alone"]], pytest_lines
    assert not any(re.search(r"\s-k\s", line) for line in pytest_lines), pytest_lines
    assert "alone" in declared_markers()
