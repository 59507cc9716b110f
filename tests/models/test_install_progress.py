"""The model download's progress (issue 49 item 5 e): on a terminal one progress bar between the first and the
last line; in a pipe or a log a few plain lines (one per quarter of the download), never one per part."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from pycapsule.commands.model import install_shown
from pycapsule.embedded_model.install import Step, install

from tests.models.conftest import LocalParts

PARTS = 8


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def eight_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalParts:
    parts = LocalParts(tmp_path, os.urandom(PARTS * 64 * 1024), PARTS)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(parts.index))
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("COLUMNS", "100")
    return parts


def test_plain_lines_say_each_quarter_not_each_part(eight_parts: LocalParts) -> None:
    out = io.StringIO()
    install_shown(eight_parts.spec, out)
    total = f"{eight_parts.spec.total_size / 1e6:.1f} MB"
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("pycapsule: installing the test model (")
    assert [line.partition(" (")[0] for line in lines[1:5]] == [
        f"pycapsule: downloaded {n} of {PARTS} parts" for n in (2, 4, 6, 8)]
    assert lines[4].endswith(f"of {total})")
    assert lines[5:] == [f"pycapsule: verifying and joining {PARTS} parts",
                         "pycapsule: installed test-model.gguf: size and SHA-256 verified"]


def test_a_terminal_gets_one_bar_between_the_first_and_the_last_line(eight_parts: LocalParts) -> None:
    out = Terminal()
    path = install_shown(eight_parts.spec, out)
    assert path.read_bytes() == b"".join(eight_parts.chunks)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # the cursor moves that redraw the bar
    said = [line for line in re.split(r"[\r\n]+", text) if line.strip() and "━" not in line]
    assert said[0].startswith("pycapsule: installing the test model (")
    assert said[-1] == "pycapsule: installed test-model.gguf: size and SHA-256 verified"
    assert "parts" not in text.replace("joining", "")  # no line per part or per quarter
    assert "━" in text and "pycapsule: downloading" in text and "pycapsule: verifying" in text


def test_the_bar_shows_the_bytes_the_speed_and_the_time_left(eight_parts: LocalParts) -> None:
    """Issue 68: one progress bar for the download: bytes done of the whole, speed, time left."""
    out = Terminal()
    install_shown(eight_parts.spec, out)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    total = f"{eight_parts.spec.total_size / 1e3:.1f}"  # rich's decimal units: kB for half a megabyte
    bars = [line for line in re.split(r"[\r\n]+", text) if "pycapsule: downloading" in line and "━" in line]
    shown = re.compile(rf"━ +(?P<done>[\d.]+)/{re.escape(total)} kB +(?P<speed>[\d.]+ (?:bytes|kB|MB)/s) +"
                       r"(?P<left>\d+:\d\d:\d\d)\s*$")
    matches = [match for line in bars if (match := shown.search(line))]
    assert matches, bars[-3:]
    assert any(float(match["done"]) > 0 for match in matches)


def test_the_steps_count_the_bytes_of_each_phase_up_to_the_whole(eight_parts: LocalParts,
                                                                 tmp_path: Path) -> None:
    steps: list[Step] = []
    lines: list[str] = []
    install(eight_parts.spec, tmp_path / "elsewhere", lines.append, steps.append)
    total = eight_parts.spec.total_size
    for phase in ("download", "verify"):
        done = [step.done for step in steps if step.phase == phase]
        assert done == sorted(done) and done[0] == 0 and done[-1] == total, (phase, done)
        assert {step.total for step in steps if step.phase == phase} == {total}
    assert len(lines) == 2  # the first and the last: the steps say the rest
