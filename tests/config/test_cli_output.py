"""What every command's output promises a script (issue 49 item 5): `config --json` is the shared JSON
document, errors included; a reader that stops early (`| head`) ends any command quietly; the exit-code
table is in the top-level help only, and each subcommand's help points to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.__main__ import BROKEN_PIPE
from pycapsule.commands.output import COMMAND_FIELDS
from pycapsule.exit_codes import MEANINGS, ExitCode

ENVELOPE = {"command", "ok", "exit_code", "error"}


def pycapsule(*args: str, env: dict[str, str], **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", *args], env=env, capture_output=True, text=True,
                          timeout=120, **options)  # type: ignore[call-overload]


def test_config_json_is_the_shared_document(clean_env: dict[str, str], tmp_path: Path) -> None:
    done = pycapsule("config", str(tmp_path), "--json", env=clean_env)
    document = json.loads(done.stdout)
    assert set(document) == ENVELOPE | set(COMMAND_FIELDS["config"])
    assert (document["command"], document["ok"], document["exit_code"], document["error"]) == (
        "config", True, 0, None)
    assert document["settings"]["max_attempts"]["value"] == 3 and document["python"]["why"]


def test_config_json_on_an_error_is_still_one_document(clean_env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    done = pycapsule("config", str(missing), "--json", env=clean_env)
    assert done.returncode == ExitCode.USAGE
    document = json.loads(done.stdout)
    assert set(document) == ENVELOPE | set(COMMAND_FIELDS["config"])
    assert document["ok"] is False and document["exit_code"] == ExitCode.USAGE
    assert document["error"] == {"kind": "usage", "message": f"{missing} does not exist"}
    assert f"pycapsule config: {missing} does not exist." in done.stderr


@pytest.mark.parametrize("words", [["config"], ["config", "--json"], ["check", "--help"],
                                   ["check", "{folder}"], ["check", "{folder}/mod.py", "--json"],
                                   ["model", "list"]],
                         ids=lambda words: " ".join(words))
def test_a_reader_that_stops_early_ends_any_command_quietly(clean_env: dict[str, str], tmp_path: Path,
                                                             words: list[str]) -> None:
    """`pycapsule config | head -1`: here the reader is gone before the first byte, so every write fails."""
    (tmp_path / "mod.py").write_text('def one():\n    """\n    >>> one()\n    1\n    """\n    return 1\n')
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        command = [w.format(folder=tmp_path) for w in words]
        done = subprocess.run([sys.executable, "-m", "pycapsule", *command],
                              env={**clean_env, "PYCAPSULE_SANDBOX": "unsafe-subprocess"}, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == (0 if "--help" in words else BROKEN_PIPE)  # argparse's help ignores it itself


def test_the_exit_code_table_is_in_the_top_level_help_only(clean_env: dict[str, str]) -> None:
    top = pycapsule("--help", env=clean_env)
    assert top.returncode == 0
    for code, meaning in MEANINGS.items():
        assert f"{int(code):<4} {meaning.split()[0]}" in top.stdout
    for command in ("generate", "check", "config", "bench", "model", "sandbox", "serve"):
        helped = pycapsule(command, "--help", env=clean_env)
        assert helped.returncode == 0, helped.stderr
        assert MEANINGS[ExitCode.MODEL_UNAVAILABLE] not in helped.stdout, command
        assert helped.stdout.rstrip().endswith(
            "exit codes: one table for every command; `pycapsule --help` lists it."), command
