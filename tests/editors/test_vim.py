"""Vim 9 + ALE 3.3 (Debian's vim-nox and vim-ale), for real and headless: the vimrc block from
docs/editors.md, the real `pycapsule serve`, the scripted model server. The Vim script driver
(vim/driver.vim) acts like a user: generate on a stub, hover, quick-fix a broken function, cancel.

ALE is the client that declares it cannot apply edits, applies them anyway and never answers,
sends diagnostics back without their source, and shows no progress: each run must still end, and a
successful one shows no error (none of the server's messages as ALE shows them, nothing in v:errmsg or
:messages). ALE reads only the server's stdout (no err_cb), so there is no stderr to check here."""

from __future__ import annotations

import json
import re
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

DRIVER = Path(__file__).with_name("vim") / "driver.vim"
FIX_REPLY = Text("```python\ndef already_written(n: int) -> int:\n    return 2 * n\n```")


def test_ale_generates_fixes_hovers_and_cancels(tmp_path: Path, model_server: FakeOpenAI) -> None:
    vim = require_tool(shutil.which("vim.nox") or shutil.which("vim"), "Vim (vim-nox)")
    require_tool("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale", "ALE (vim-ale)")
    model_server.queue(FIX_REPLY, Hang())
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text(f"[tool.pycapsule]\nmax_attempts = {MAX_ATTEMPTS}\n")
    (workspace / STUB_FILE).write_text(STUB_SOURCE)
    vimrc = tmp_path / "vimrc"
    vimrc.write_text(documented_block("vim-ale-config", "vim"))
    report = tmp_path / "report.json"
    env = editor_environment(tmp_path / "home", model_server)
    env.update(PYCAPSULE_VIM_REPORT=str(report), PYCAPSULE_VIM_EXPECT=CORRECT_BODY, TERM="dumb")

    result = subprocess.run(
        [vim, "-N", "-u", str(vimrc), "-i", "NONE", "-n", "--not-a-term", "-S", str(DRIVER), STUB_FILE],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )

    seen = json.loads(report.read_text()) if report.exists() else {}
    assert result.returncode == 0 and "error" not in seen, (seen.get("error"), seen, result.stderr[-2000:])
    [generate_menu, *_] = seen["menus"]
    assert "Generate & self-debug" in generate_menu
    assert any("attempts at digit_sum" in m and "passed (attempt 2" in m for m in seen["messages"]), seen
    assert any("Cancel generating `slow_stub`" in m for m in seen["menus"]), seen["menus"]
    # no error after the successful runs: ALE shows the server's messages as "<severity>:pycapsule: ...",
    # and Vim's own errors would be in v:errmsg and :messages
    assert any(m.startswith("Info:pycapsule:") and "`digit_sum` passes" in m for m in seen["messages"]), seen
    assert not [m for m in seen["messages"] if m.startswith(("Error", "Warning"))], seen["messages"]
    assert seen["errmsg"] == "", seen["errmsg"]
    assert not re.search(r"^E\d+:|Error|Traceback", seen["vim_messages"], re.MULTILINE), seen["vim_messages"]
    on_disk = (workspace / STUB_FILE).read_text()
    assert CORRECT_BODY in on_disk and "return 2 * n" in on_disk
    assert doctest_failures(workspace / STUB_FILE) == 0
    assert doctest_failures(workspace / STUB_FILE, "already_written") == 0
