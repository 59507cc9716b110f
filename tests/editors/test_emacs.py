"""Emacs 28 + eglot 1.9 (Debian's emacs-nox and elpa-eglot), for real and headless: the set-up block
from docs/editors.md, the real `pycapsule serve`, the scripted model server. The elisp driver
(emacs/driver.el) acts like a user: generate on a stub, hover, quick-fix a broken function, cancel;
emacs/edit_above.el plays issue 47's scenarios on a stub above a failing function (the quick-fix right
after the generated edit above it; typing on through the end of a run). After a successful run nothing reads
as an error in *Messages*, and eglot's events and stderr buffers hold no traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors.scenario import (
    ABOVE_FILE,
    ABOVE_SOURCE,
    CORRECT_BODY,
    FAILING_EXAMPLE,
    FIX_TWICE,
    FIXED_TWICE,
    LONG_BODY,
    LONG_BODY_LAST_LINE,
    MAX_ATTEMPTS,
    STUB_FILE,
    STUB_SOURCE,
    TYPING_LINE,
    doctest_failures,
    documented_block,
    editor_environment,
    require_tool,
)
from tests.fakes.openai_server import Delay, FakeOpenAI, Hang, Text

pytestmark = pytest.mark.editor

DRIVER = Path(__file__).with_name("emacs") / "driver.el"
EDIT_ABOVE = Path(__file__).with_name("emacs") / "edit_above.el"
FIX_REPLY = Text("```python\ndef already_written(n: int) -> int:\n    return 2 * n\n```")


def run_emacs(
    tmp_path: Path, model_server: FakeOpenAI, name: str, source: str, driver: Path, **settings: str
) -> tuple[Path, dict]:
    """Emacs on `name` (holding `source`) with the eglot block of docs/editors.md, running `driver` with
    $PYCAPSULE_EMACS_<setting>: the workspace and the driver's report (the driver got to its end)."""
    emacs = require_tool(shutil.which("emacs"), "Emacs (emacs-nox)")
    require_tool("/usr/share/emacs/site-lisp/elpa/eglot-1.9/eglot.el", "eglot (elpa-eglot)")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # project.el finds the project by VC
    (workspace / "pyproject.toml").write_text(f"[tool.pycapsule]\nmax_attempts = {MAX_ATTEMPTS}\n")
    (workspace / name).write_text(source)
    init = tmp_path / "init.el"
    init.write_text(documented_block("emacs-eglot-config", "elisp"))
    report = tmp_path / "report.json"
    env = editor_environment(tmp_path / "home", model_server)
    env.update(PYCAPSULE_EMACS_REPORT=str(report), PYCAPSULE_EMACS_FILE=str(workspace / name))
    env.update({f"PYCAPSULE_EMACS_{key.upper()}": value for key, value in settings.items()})

    result = subprocess.run(
        [emacs, "--batch", "-l", str(init), "-l", str(driver)],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )

    seen = json.loads(report.read_text()) if report.exists() else {}
    assert result.returncode == 0 and "error" not in seen, seen.get("error") or result.stderr[-3000:]
    return workspace, seen


def error_lines(messages: str) -> list[str]:
    """The lines of *Messages* a user reads as an error: an Error or Warning the server showed
    (eglot: "Server reports (type=1)"), or any error eglot or jsonrpc reports."""
    return [line for line in messages.splitlines()
            if "(type=1)" in line or "(type=2)" in line or "error" in line.lower() or "Traceback" in line]


def assert_nothing_went_wrong(seen: dict) -> None:
    """No error in *Messages*, no traceback or CANCELLED in eglot's events buffer, nothing in its stderr
    buffer but what the server logs on purpose (it writes nothing there)."""
    assert not error_lines(seen["messages"]), seen["messages"]
    assert not seen["events-flagged"], seen["events-flagged"]
    assert "Traceback" not in seen["stderr"] and "CANCELLED" not in seen["stderr"], seen["stderr"]


def test_eglot_generates_fixes_hovers_and_cancels(tmp_path: Path, model_server: FakeOpenAI) -> None:
    model_server.queue(FIX_REPLY, Hang())
    workspace, seen = run_emacs(tmp_path, model_server, STUB_FILE, STUB_SOURCE, DRIVER, expect=CORRECT_BODY)

    assert seen["offered"] == ["Generate & self-debug"]
    assert seen["generated"] == "passed"
    assert not error_lines(seen["shown-after-generate"]), seen["shown-after-generate"]
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
    assert_nothing_went_wrong(seen)


def above_scenario(tmp_path: Path, model_server: FakeOpenAI, **settings: str) -> tuple[Path, dict]:
    workspace, seen = run_emacs(
        tmp_path, model_server, ABOVE_FILE, ABOVE_SOURCE, EDIT_ABOVE, expect=LONG_BODY_LAST_LINE,
        typing_line=TYPING_LINE, failing=FAILING_EXAMPLE, fixed=FIXED_TWICE, **settings)
    assert seen["offered"] == ["Generate & self-debug"], seen["offered"]
    assert seen["generated"] == "passed", seen
    return workspace, seen


def test_eglot_code_actions_offers_the_quick_fix_right_after_an_edit_above(tmp_path: Path) -> None:
    """Issue 47 item 2: generating the stub moves the failing function three lines down; right after the
    edit, before any save, M-x eglot-code-actions offers "Self-debug" on its name and in its body (eglot sends
    no diagnostic there) and at the end of its failing example's line, where it fixes the function."""
    with FakeOpenAI() as model_server:
        model_server.queue(LONG_BODY, FIX_TWICE)
        workspace, seen = above_scenario(tmp_path, model_server)

    assert seen["failing-line"] == ABOVE_SOURCE.splitlines().index(f"    {FAILING_EXAMPLE}") + 1 + 3
    assert seen["sent-on-def"] == seen["sent-on-body"] == 0, "eglot sends no diagnostic there"
    fix = ["Self-debug `twice` (doctests failing)"]
    assert seen["offered-on-def"] == seen["offered-on-body"] == seen["fix-offered"] == fix, seen
    assert seen["fixed"] == "passed"
    on_disk = (workspace / ABOVE_FILE).read_text()
    assert f"    {FIXED_TWICE}\n" in on_disk and f"    {LONG_BODY_LAST_LINE}\n" in on_disk, on_disk
    assert doctest_failures(workspace / ABOVE_FILE) == 0
    assert doctest_failures(workspace / ABOVE_FILE, "twice") == 0
    assert_nothing_went_wrong(seen)


def test_typing_on_through_the_end_of_a_run_keeps_the_result_in_eglot(tmp_path: Path) -> None:
    """Issue 47 item 3: a keystroke every 0.2 s in a line outside the function from the run's start through
    its result's arrival and 4 s beyond. eglot reports typing only after 0.5 s of quiet and refuses an edit
    made for an older version, so the result is refused while the user types and lands once they pause."""
    with FakeOpenAI() as model_server:
        model_server.queue(Delay(1.0, LONG_BODY))
        workspace, seen = above_scenario(tmp_path, model_server, type="through", beyond="4")

    refusals = [e for e in seen["edits-while-typing"] if e != "applied"]
    assert refusals and all("require version" in e for e in refusals), seen["edits-while-typing"]
    assert seen["typed"] >= 20, seen["typed"]
    assert seen["typing-line"] == TYPING_LINE + "x" * seen["typed"], "every keystroke kept"
    on_disk = (workspace / ABOVE_FILE).read_text()
    assert f"    {LONG_BODY_LAST_LINE}\n" in on_disk, on_disk
    assert doctest_failures(workspace / ABOVE_FILE) == 0
    assert seen["edits"][-1] == "applied", seen["edits"]
    assert_nothing_went_wrong(seen)
