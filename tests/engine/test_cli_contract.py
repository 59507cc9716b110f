"""The command line's contract, as a script sees it: one exit-code table for every command, exactly one
JSON document of one shape with --json (errors included), help for every option, and the docs saying
the same. The real CLI in a subprocess, the scripted model over HTTP, the real default sandbox."""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pycapsule.__main__ import build_parser
from pycapsule.commands.output import COMMAND_FIELDS
from pycapsule.exit_codes import MEANINGS, ExitCode

from tests.engine.conftest import FAKE_KEY
from tests.engine.test_generate_cli import AREA, AREA_WRONG, STUBS
from tests.fakes.openai_server import FakeOpenAI

ENVELOPE = {"command", "ok", "exit_code", "error"}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "generate.md"

PASSING = '''def double(x):
    """
    >>> double(2)
    4
    """
    return 2 * x
'''
FAILING = PASSING.replace("return 2 * x", "return 3 * x")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nretry_backoff = 0.01\nmodel_retries = 1\n")
    (tmp_path / "shapes.py").write_text(STUBS)
    (tmp_path / "good.py").write_text(PASSING)
    (tmp_path / "bad.py").write_text(FAILING)
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    return tmp_path


def pycapsule(server: FakeOpenAI, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": FAKE_KEY,
                   "PYCAPSULE_MODEL": "fake-coder", **env}
    done = subprocess.run([sys.executable, "-m", "pycapsule", *args], env=environment, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr and FAKE_KEY not in done.stdout + done.stderr
    return done


def the_document(done: subprocess.CompletedProcess[str], command: str | None) -> dict[str, Any]:
    """stdout is exactly one JSON document with the envelope and every field of its command."""
    document = json.loads(done.stdout)  # raises on anything but one document
    assert set(document) == ENVELOPE | set(COMMAND_FIELDS.get(command or "", {})), document
    assert document["command"] == command and document["exit_code"] == done.returncode
    assert document["ok"] is (done.returncode == 0)
    assert (document["error"] is None) or {"kind", "message"} <= set(document["error"])
    return document


# (command, arguments with {folder}, what the model answers, the situation's exit code, the error kind)
SITUATIONS = [
    ("generate", ["{folder}/shapes.py::area"], [AREA], ExitCode.OK, None),
    ("check", ["{folder}/good.py"], [], ExitCode.OK, None),
    ("generate", ["{folder}/shapes.py::area", "--max-attempts", "1"], [AREA_WRONG], ExitCode.FAILED, None),
    ("check", ["{folder}/bad.py"], [], ExitCode.FAILED, None),
    ("generate", ["{folder}/broken.py"], [], ExitCode.FAILED, "syntax"),
    ("check", ["{folder}/broken.py"], [], ExitCode.FAILED, "syntax"),
    ("generate", ["{folder}/missing.py"], [], ExitCode.USAGE, "usage"),
    ("check", ["{folder}/missing.py"], [], ExitCode.USAGE, "usage"),
    ("generate", ["{folder}/shapes.py::nope"], [], ExitCode.USAGE, "usage"),
    ("check", ["{folder}/good.py::nope"], [], ExitCode.USAGE, "usage"),
    ("generate", ["{folder}/shapes.py", "--backend", "podman"], [], ExitCode.USAGE, "usage"),
    ("check", ["{folder}/good.py", "--backend", "podman"], [], ExitCode.USAGE, "usage"),
    ("generate", ["{folder}/shapes.py", "--max-attempts", "many"], [], ExitCode.USAGE, "usage"),
    ("generate", ["{folder}/shapes.py", "--no-such-flag"], [], ExitCode.USAGE, "usage"),
    ("check", ["{folder}/good.py", "--no-such-flag"], [], ExitCode.USAGE, "usage"),
    ("generate", ["{folder}/shapes.py::area"], ["down"], ExitCode.MODEL_UNAVAILABLE, "model"),
    ("generate", ["{folder}/shapes.py::area", "--backend", "docker"], [], ExitCode.SANDBOX_UNAVAILABLE,
     "sandbox"),
    ("check", ["{folder}/good.py", "--backend", "docker"], [], ExitCode.SANDBOX_UNAVAILABLE, "sandbox"),
]
NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
@pytest.mark.parametrize(("command", "arguments", "replies", "code", "kind"), SITUATIONS,
                         ids=[f"{c}-{' '.join(a).replace('{folder}/', '')}-{int(e)}" for c, a, _, e, _k in
                              SITUATIONS])
def test_every_command_has_the_same_exit_code_for_the_same_situation(
        openai_server: FakeOpenAI, folder: Path, command: str, arguments: list[str], replies: list[str],
        code: ExitCode, kind: str | None, json_output: bool) -> None:
    server = openai_server
    if replies == ["down"]:
        server = FakeOpenAI().start()
        server.stop()
    else:
        server.queue(*replies)
    words = [a.format(folder=folder) for a in arguments] + (["--json"] if json_output else [])
    done = pycapsule(server, command, *words, **NO_DOCKER)
    assert done.returncode == code, done.stdout + done.stderr
    if json_output:
        document = the_document(done, command)
        assert (document["error"] or {}).get("kind") == kind, document
    elif kind is not None:
        assert done.stderr.strip() or done.stdout.strip()  # said in words, not only by the code


def test_a_usage_error_without_a_command_is_still_one_json_document(openai_server: FakeOpenAI) -> None:
    done = pycapsule(openai_server, "--json")
    assert done.returncode == ExitCode.USAGE
    assert the_document(done, None)["error"]["kind"] == "usage"


def test_check_has_one_shape_for_a_report_and_for_a_syntax_error(openai_server: FakeOpenAI,
                                                                  folder: Path) -> None:
    shapes = []
    for name in ("good.py", "bad.py", "broken.py"):
        done = pycapsule(openai_server, "check", str(folder / name), "--json")
        shapes.append(set(the_document(done, "check")))
    assert shapes[0] == shapes[1] == shapes[2]
    broken = json.loads(pycapsule(openai_server, "check", str(folder / "broken.py"), "--json").stdout)
    assert broken["passed"] is False and broken["error"]["line"] == 1 and broken["functions"] == []


def test_generate_json_when_the_file_changed_meanwhile_says_so_consistently(
        openai_server: FakeOpenAI, folder: Path) -> None:
    project = folder / "shapes.py"

    def edit_then_answer(request: object) -> str:
        project.write_text(STUBS + "\n# edited by the user meanwhile\n")
        return AREA

    openai_server.responder = edit_then_answer
    done = pycapsule(openai_server, "generate", f"{project}::area", "--write", "--json")
    document = the_document(done, "generate")
    assert done.returncode == ExitCode.FAILED
    # the doctests passed; the file was not written; the error says why; the result says passed
    assert document["passed"] is True and document["written"] is False
    assert document["error"]["kind"] == "write" and "changed on disk" in document["error"]["message"]
    [result] = document["results"]
    assert result["status"] == "passed" and result["changed"] is True
    assert "+    return round(math.pi * r * r)" in document["diff"]
    assert project.read_text().endswith("# edited by the user meanwhile\n")


def test_generate_json_after_a_full_run_is_ok_and_every_target_changed(
        openai_server: FakeOpenAI, folder: Path) -> None:
    openai_server.queue(AREA, "```python\ndef square(self, side):\n    return side * side\n```")
    done = pycapsule(openai_server, "generate", str(folder / "shapes.py"), "--write", "--json")
    document = the_document(done, "generate")
    assert done.returncode == ExitCode.OK and document["error"] is None
    assert document["passed"] and document["written"]
    assert [(r["qualname"], r["status"], r["changed"]) for r in document["results"]] == [
        ("area", "passed", True), ("Shapes.square", "passed", True)]


def every_action(parser: argparse.ArgumentParser, path: str = "pycapsule") -> list[tuple[str, Any]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {choice.dest for choice in action._choices_actions if choice.help}
            for name, sub in action.choices.items():
                found.append((f"{path} {name}", "help" if name in helped else None))
                found.extend(every_action(sub, f"{path} {name}"))
        elif not isinstance(action, argparse._HelpAction):
            found.append((f"{path} {'/'.join(action.option_strings) or action.dest}", action.help))
    return found


def test_every_subcommand_and_option_has_help() -> None:
    actions = every_action(build_parser())
    assert len(actions) > 30  # the walk found the tree
    assert [where for where, text in actions if not text] == []


@pytest.mark.parametrize(("words", "modules"),
                         [(["--version"], []), (["--help"], []), (["check", "--help"], ["check"])])
def test_the_command_line_imports_only_the_subcommand_it_runs(words: list[str], modules: list[str]) -> None:
    """`--version` (an editor runs it before every start), the list of subcommands and one subcommand do not
    pay for the others."""
    probe = ("import sys\nfrom pycapsule.__main__ import COMMANDS, main\ntry:\n    main(sys.argv[1:])\n"
             "except SystemExit:\n    pass\n"
             "print(' '.join(c for c in COMMANDS if f'pycapsule.commands.{c}' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe, *words], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == modules


def test_the_docs_list_the_exit_code_table() -> None:
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", DOCS.read_text(), re.MULTILINE)
    assert {int(code) for code, _ in rows} == {int(code) for code in MEANINGS}
    assert {int(code) for code in MEANINGS} == {0, 1, 2, 3, 4, 5, 130}


def test_help_ends_with_the_exit_code_table(openai_server: FakeOpenAI) -> None:
    done = pycapsule(openai_server, "--help")  # a subcommand's points here (tests/config/test_cli_output.py)
    assert done.returncode == 0
    for code, meaning in MEANINGS.items():
        assert f"{int(code):<4} {meaning.split()[0]}" in done.stdout


def test_check_interrupted_exits_130_with_one_json_document_and_stops_the_job(folder: Path) -> None:
    """Ctrl-C while a doctest runs: the doctest writes its pid into a FIFO the test waits on, so the SIGINT
    comes while it runs (the unprotected backend, so that it can reach the FIFO)."""
    fifo = folder / "started"
    os.mkfifo(fifo)
    (folder / "forever.py").write_text(f'''def forever():
    """
    >>> forever()
    """
    import os; open({str(fifo)!r}, "w").write(str(os.getpid()))
    while True:
        pass
''')
    process = subprocess.Popen(
        [sys.executable, "-m", "pycapsule", "check", str(folder / "forever.py"),
         "--backend", "unsafe-subprocess", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with fifo.open() as started:  # returns once the doctest opened it: the job is under way
            job = os.pidfd_open(int(started.read()))
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == ExitCode.INTERRUPTED, stderr
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert the_document(done, "check")["error"]["kind"] == "interrupted"
    assert "Traceback" not in stderr
    try:  # the job ended with the run: its pidfd becomes readable when it exits
        assert select.select([job], [], [], 30)[0] == [job], "the interrupted job is still running"
    finally:
        os.close(job)
