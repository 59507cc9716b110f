"""Terminal-safe output and odd input files (issue 13): what a job prints or a file holds never
drives the terminal, and every file gets a report or a one-line error, never a traceback."""

from __future__ import annotations

import doctest
import io
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from pycapsule.commands.progress import LiveProgress
from pycapsule.commands.progress import PlainProgress as _Progress
from pycapsule.events import AttemptFinished
from pycapsule.model_client import Usage
from pycapsule.sandbox.api import Sandbox
from pycapsule.terminal import terminal_safe

from .conftest import EVERY_BACKEND, run

ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\u202e"
LONE_SURROGATE = '''
def as_printed():
    """A file name read with surrogateescape, printed as it is.

    >>> as_printed()
    caf\\udce9
    """
    print('caf\\udce9')


def as_decoded():
    """
    >>> as_decoded()
    café
    """
    print('caf\\udce9')


def outside_the_escape_range():
    """
    >>> outside_the_escape_range()
    \\ud800
    """
    print('\\ud800')
'''


def pycapsule(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"}, errors="replace")


def assert_terminal_safe(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\u202e"), repr(text)


def test_terminal_safe_shows_controls_as_escapes_and_keeps_layout() -> None:
    assert terminal_safe("a\tb\r\nc\n") == "a\tb\r\nc\n"
    assert terminal_safe(ESCAPES) == "\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x1b[H\\u202e"
    assert terminal_safe("over\rwrite") == "over\\rwrite"


def test_terminal_safe_shows_lone_surrogates_as_escapes() -> None:
    assert terminal_safe("caf\udce9 \ud800 é 😀") == "caf\\udce9 \\ud800 é 😀"


def stock_doctest(source: str) -> dict[str, bool]:
    """Whether each function's examples pass under the standard library's doctest, run here."""
    module = types.ModuleType("odd")
    exec(compile(source, "odd.py", "exec"), module.__dict__)
    runner = doctest.DocTestRunner()
    verdicts = {}
    for test in doctest.DocTestFinder().find(module, "odd"):
        if test.examples:
            verdicts[test.name.removeprefix("odd.")] = runner.run(test, out=lambda _: None).failed == 0
    return verdicts


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_a_lone_surrogate_printed_is_judged_as_stock_doctest_judges_it(sandbox: Sandbox) -> None:
    expected = stock_doctest(LONE_SURROGATE)
    assert expected == {"as_printed": True, "as_decoded": False, "outside_the_escape_range": True}
    result = run(sandbox, LONE_SURROGATE, doctest_targets=tuple(expected))
    assert result.status == "ok", result.detail
    assert {f.qualname: f.failed == 0 for f in result.functions} == expected
    [failure] = [failure for f in result.functions for failure in f.failures]
    assert (failure.expected, failure.got) == ("café\n", "caf\udce9\n")


def test_a_lone_surrogate_reaches_the_terminal_as_an_escape(tmp_path: Path) -> None:
    module = tmp_path / "odd.py"
    module.write_text(LONE_SURROGATE)
    strict = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run([sys.executable, "-m", "pycapsule", "check", str(module), "--backend", "bwrap"],
                          capture_output=True, timeout=120, env=strict)
    assert done.returncode == 1, done.stderr
    report = done.stdout.decode("utf-8")  # strict: every byte is text
    assert "FAIL  as_decoded" in report and "caf\\udce9" in report and "Traceback" not in report


def test_the_live_progress_shows_emoji_codes_as_text() -> None:
    stream = io.StringIO()
    LiveProgress(stream).say("answer: :x: :warning:")
    assert ":x: :warning:" in stream.getvalue()


def test_what_a_job_prints_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    module = tmp_path / "loud.py"
    module.write_text(f'''
def loud():
    """
    >>> loud()
    quiet
    """
    print({ESCAPES!r})
''')
    done = pycapsule("check", str(module), "--backend", "bwrap")
    assert done.returncode == 1, done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    assert "\\x1b]52;c;cHduZWQ=\\x07" in done.stdout  # still shown, as text


def test_generate_progress_escapes_the_failure_it_shows() -> None:
    stream = io.StringIO()
    event = AttemptFinished(attempt=1, passed=False, headline=f"failed: {ESCAPES}",
                            condensed="", failure=f"got:\n  {ESCAPES}", code="", usage=Usage(), seconds=0.0)
    _Progress(stream).on_event("f", event)
    assert_terminal_safe(stream.getvalue())
    assert "\\x1b[2J" in stream.getvalue()


def one_line_or_report(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2)
    message = done.stderr.strip() or done.stdout.strip()
    assert message and len(message.splitlines()) == 1, (done.stdout, done.stderr)


def test_a_nul_byte_is_a_syntax_error_at_its_line(tmp_path: Path) -> None:
    module = tmp_path / "nul.py"
    module.write_bytes(b"x = 1\ny = 2\nz = '\0'\n")
    done = pycapsule("check", str(module), "--backend", "bwrap")
    one_line_or_report(done)
    assert done.returncode == 1
    assert done.stdout.startswith(f"{module}:3: syntax error: a NUL byte"), done.stdout
    generated = pycapsule("generate", str(module), "--backend", "bwrap")
    one_line_or_report(generated)
    assert generated.returncode == 1 and f"{module}:3: syntax error: a NUL byte" in generated.stderr


@pytest.mark.parametrize("content", [
    pytest.param(b"# coding: klingon\nx = 1\n", id="unknown-encoding"),
    pytest.param(b"x = '\xff\xfe'\n", id="invalid-utf8"),
    pytest.param("x = 'ü'\n".encode("utf-16"), id="utf16-with-bom"),
    pytest.param(b"x = " + b"-" * 200_000 + b"1\n", id="nested-past-the-parser"),
    pytest.param(b"x = 1\n" + b"#" * (17 << 20) + b"\n", id="17-MiB"),
    pytest.param(b"", id="empty"),
])
@pytest.mark.parametrize("command", ["check", "generate"])
def test_any_file_gets_a_report_or_one_line(tmp_path: Path, content: bytes, command: str) -> None:
    module = tmp_path / "odd.py"
    module.write_bytes(content)
    one_line_or_report(pycapsule(command, str(module), "--backend", "bwrap"))


@pytest.mark.parametrize("command", ["check", "generate"])
def test_a_file_that_is_not_utf8_is_a_usage_error_in_one_sentence(tmp_path: Path, command: str) -> None:
    module = tmp_path / "latin1.py"
    module.write_bytes("def f():\n    return 'café'\n".encode("latin-1"))  # and no coding comment
    done = pycapsule(command, str(module), "--backend", "bwrap")
    one_line_or_report(done)
    assert done.returncode == 2 and done.stdout == ""
    assert f"{module} cannot be decoded: byte 0xe9 on line 2 is not UTF-8 (save the file as UTF-8, or name " \
           "its encoding in a coding comment)" in done.stderr


def test_a_fifo_or_a_device_is_refused_in_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        for command in ("check", "generate"):
            done = pycapsule(command, path)
            one_line_or_report(done)
            assert done.returncode == 2
