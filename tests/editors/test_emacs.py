"""Emacs 28 + eglot 1.9 (Debian's emacs-nox and elpa-eglot), for real and headless: the set-up block
from docs/editors.md, the real `pycapsule serve`, the scripted model server. The elisp driver
(emacs/driver.el) acts like a user: generate on a stub, hover, quick-fix a broken function, cancel."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors.scenario import (
    CORRECT_BODY,
    MAX_ATTEMPTS,
    STUB_FILE,
    STUB_SOURCE,
    doctest_failures,
    documented_block,
    editor_environment,
    require_tool,
)
from tests.fakes.openai_server import FakeOpenAI, Hang, Text

pytestmark = pytest.mark.editor

DRIVER = Path(__file__).with_name("emacs") / "driver.el"
FIX_REPLY = Text("```python\ndef already_written(n: int) -> int:\n    return 2 * n\n```")


def test_eglot_generates_fixes_hovers_and_cancels(tmp_path: Path, model_server: FakeOpenAI) -> None:
    emacs = require_tool(shutil.which("emacs"), "Emacs (emacs-nox)")
    require_tool("/usr/share/emacs/site-lisp/elpa/eglot-1.9/eglot.el", "eglot (elpa-eglot)")
    model_server.queue(FIX_REPLY, Hang())
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # project.el finds the project by VC
    (workspace / "pyproject.toml").write_text(f"[tool.pycapsule]\nmax_attempts = {MAX_ATTEMPTS}\n")
    (workspace / STUB_FILE).write_text(STUB_SOURCE)
    init = tmp_path / "init.el"
    init.write_text(documented_block("emacs-eglot-config", "elisp"))
    report = tmp_path / "report.json"
    env = editor_environment(tmp_path / "home", model_server)
    env.update(
        PYCAPSULE_EMACS_REPORT=str(report),
        PYCAPSULE_EMACS_FILE=str(workspace / STUB_FILE),
        PYCAPSULE_EMACS_EXPECT=CORRECT_BODY,
    )

    result = subprocess.run(
        [emacs, "--batch", "-l", str(init), "-l", str(DRIVER)],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )

    seen = json.loads(report.read_text()) if report.exists() else {}
    assert result.returncode == 0 and "error" not in seen, seen.get("error") or result.stderr[-3000:]
    assert seen["offered"] == ["Generate & self-debug"]
    assert seen["generated"] == "passed"
    # eglot asks for Markdown only when markdown-mode is installed: plain text here
    assert "attempts at digit_sum" in seen["hover"] and "passed (attempt 2" in seen["hover"]
    assert "**" not in seen["hover"]
    assert seen["fixed"] == "passed"
    assert seen["cancel-offered"] == ["Cancel generating `slow_stub`"]
    assert seen["cancelled"] == "cancelled"
    on_disk = (workspace / STUB_FILE).read_text()
    assert CORRECT_BODY in on_disk and "return 2 * n" in on_disk
    assert doctest_failures(workspace / STUB_FILE) == 0
    assert doctest_failures(workspace / STUB_FILE, "already_written") == 0
