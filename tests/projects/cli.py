"""This tree's `pycapsule` CLI in a subprocess, as a user runs it, and the shape of `check --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parents[2] / "server"
FAKE_KEY = "sk-projects-0123456789-do-not-leak"


def cli_env(home: Path, model_url: str | None = None) -> dict[str, str]:
    """No model or pycapsule settings from the caller; this tree's package first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYCAPSULE_"))}
    env.update(PYTHONPATH=str(SERVER), PYCAPSULE_HISTORY=str(home / "history.sqlite3"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_STATE_HOME=str(home / "state"))
    if model_url is not None:
        env.update(OPENAI_BASE_URL=model_url, OPENAI_API_KEY=FAKE_KEY, PYCAPSULE_MODEL="fake-coder")
    return env


def pycapsule(*args: str, home: Path, model_url: str | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m pycapsule ARGS` from `cwd` (default: a folder outside every project)."""
    if cwd is None:
        cwd = home / "elsewhere"
        cwd.mkdir(exist_ok=True)
    result = subprocess.run([sys.executable, "-m", "pycapsule", *args], env=cli_env(home, model_url),
                            cwd=cwd, capture_output=True, text=True, timeout=240)
    assert "Traceback" not in result.stderr, result.stderr
    assert FAKE_KEY not in result.stdout + result.stderr
    return result


def check_json(target: str, home: Path) -> tuple[int, dict[str, Any]]:
    """`pycapsule check TARGET --json`: its exit code and its report."""
    result = pycapsule("check", target, "--json", home=home)
    assert result.stdout.strip(), f"no JSON report (exit {result.returncode}): {result.stderr}"
    return result.returncode, json.loads(result.stdout)


def outcome(function: dict[str, Any]) -> str:
    """One function's result in `check --json`, in pytest's words: "failed", "passed" (at least one
    example ran and none failed) or "skipped" (nothing verified: no example ran). Only its docstring's
    examples, as `pytest --doctest-modules` runs them: the project's documentation's (`documented`, failures
    with a `document`) are `--doctest-glob`'s."""
    own_failures = [f for f in function["failures"] if not f.get("document")]
    if function.get("parse_error") or own_failures:
        return "failed"
    return "passed" if function["attempted"] - function.get("documented", 0) > 0 else "skipped"


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    """qualname -> outcome, for every function the report lists."""
    return {f["qualname"]: outcome(f) for f in report.get("functions", [])}


def generate_json(target: str, home: Path, model_url: str, *flags: str) -> tuple[int, dict[str, Any], str]:
    """`pycapsule generate TARGET --json FLAGS` against the scripted model, at most 2 attempts per function:
    exit code, report, stderr."""
    result = pycapsule("generate", target, "--json", "--max-attempts", "2", *flags,
                       home=home, model_url=model_url)
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, report, result.stderr
