"""The measurement tools live apart from the product: one command runs each, and the `pycapsule` command
line keeps a single bench command, the dataset bench."""

from __future__ import annotations

import argparse
import re

import pytest
from pycapsule.__main__ import build_parser

from measurements.__main__ import TOOLS, main
from measurements.timing import figures, percentile
from tests.measurements.conftest import measurements

TOOL_NAMES = ["sandbox", "model", "loop", "lsp", "capsule", "answers", "generate", "slots", "speculative",
              "prompt_cache", "read_ahead", "prompt_size", "strength", "answer_ends", "echo"]


def test_one_command_lists_every_tool_and_each_says_what_it_measures(
        capsys: pytest.CaptureFixture[str]) -> None:
    done = measurements("--help")
    assert done.returncode == 0, done.stderr
    assert list(TOOLS) == TOOL_NAMES
    for name in TOOL_NAMES:
        assert re.search(rf"^    {name}\s", done.stdout, re.MULTILINE), name  # a long name: help below
        # each tool's own help from the same parser, in this process (the command above ran it for real)
        with pytest.raises(SystemExit) as exited:
            main([name, "--help"])
        assert exited.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: python3 -m measurements {name} ")


def test_the_pycapsule_command_line_has_one_bench_the_dataset_bench() -> None:
    def commands(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += [f"{path} {name}", *commands(sub, f"{path} {name}")]
        return found

    benches = [command for command in commands(build_parser(), "pycapsule") if "bench" in command]
    assert benches == ["pycapsule bench"]


def test_percentiles_are_measured_values_by_nearest_rank() -> None:
    samples = [0.005, 0.001, 0.004, 0.002, 0.003]
    assert percentile(samples, 0.0) == 0.001 and percentile(samples, 1.0) == 0.005
    assert percentile(samples, 0.9) == 0.005  # rank 3.6 rounds to 4
    assert percentile(samples, 0.5) == 0.003
    summed = figures(samples, 0.9)
    assert (summed.median_ms, summed.percentile_ms) == (3.0, 5.0)
