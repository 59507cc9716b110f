"""Settings from initializationOptions, workspace/configuration and [tool.pycapsule]; bad values
get one clear message naming the key and the default, and the server goes on."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.lsp.conftest import TEST_OPTIONS, new_project
from tests.lsp.editor import API_KEY, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel
from tests.lsp.sources import (
    ADD_STUB,
    ADD_WRONG,
    BROKEN_DOUBLE,
    SELECTED_ENV_SOURCE,
    environment_with_a_module,
)
from tests.lsp.test_cancel import STUB_LINE


async def run_once(editor, uri: str) -> dict:
    # (a run that gave up before also leaves its closest try there)
    [action] = [a for a in await editor.code_actions(uri, STUB_LINE) if a.title == "Generate & self-debug"]
    return await editor.run(action.command)


async def test_bad_values_get_a_message_and_the_default(fake: ScriptedModel, project: Path, tmp_path: Path):
    options = {"maxAttempts": 0, "jobTimeout": "soon", "colour": "blue", "modelRetries": 0}
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path), options)
    try:
        uri = editor.open("mod.py", ADD_STUB)
        assert await editor.code_actions(uri, STUB_LINE), "the server goes on"
        warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
        assert any("max_attempts" in m and "default 3" in m for m in warnings), warnings
        assert any("job_timeout" in m and "default 10.0" in m for m in warnings), warnings
        assert any("colour" in m for m in warnings), warnings
        assert all("\n" not in m for m in warnings)
    finally:
        await stop_editor(editor)


async def test_pyproject_table_sets_the_budget(fake: ScriptedModel, project: Path, tmp_path: Path):
    (project / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 1\nmodel_retries = 0\n")
    fake.queue(ADD_WRONG)
    editor = await start_editor("neovim", project, server_env(fake.base_url, tmp_path))
    try:
        result = await run_once(editor, editor.open("mod.py", ADD_STUB))
        assert result["status"] == "gave_up" and result["attempts"] == 1
    finally:
        await stop_editor(editor)


async def test_a_project_file_may_not_raise_a_limit_or_choose_the_model(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    """The CLI's trust rule, through the server's own settings path: the project's 50 attempts become the
    default 3 and its model is ignored, each said in one warning; the editor's values are the user's."""
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.pycapsule]\nmax_attempts = 50\nmodel = "project-model"\n')
    user_file = str(tmp_path / "no-user-config.toml")
    env = server_env(fake.base_url, tmp_path, PYCAPSULE_MODEL="", PYCAPSULE_CONFIG=user_file)
    editor = await start_editor("visual-studio-code", project, env, configuration={"modelRetries": 0})
    try:
        fake.queue(*[ADD_WRONG] * 3)
        result = await run_once(editor, editor.open("mod.py", ADD_STUB))
        assert (result["status"], result["attempts"]) == ("gave_up", 3)
        assert {request.body["model"] for request in fake.chat_requests} == {"fake-coder"}, "the endpoint's"
        warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
        assert any(f"'max_attempts' = 50 in {pyproject} is lowered to the default 3" in m for m in warnings)
        assert any(f"'model' in {pyproject} is ignored" in m for m in warnings), warnings

        editor.client.set_configuration({"maxAttempts": 4, "modelRetries": 0}, section="pycapsule")
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        fake.queue(*[ADD_WRONG] * 4)
        assert (await run_once(editor, editor.uri("mod.py")))["attempts"] == 4, "the editor may raise it"
    finally:
        await stop_editor(editor)


async def test_workspace_configuration_wins_and_is_reloaded(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    (project / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 3\n")
    editor = await start_editor(
        "visual-studio-code",
        project,
        server_env(fake.base_url, tmp_path),
        configuration={"maxAttempts": 1, "modelRetries": 0},
    )
    try:
        uri = editor.open("mod.py", ADD_STUB)
        fake.queue(ADD_WRONG)
        assert (await run_once(editor, uri))["attempts"] == 1

        editor.client.set_configuration({"maxAttempts": 2, "modelRetries": 0}, section="pycapsule")
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        fake.queue(ADD_WRONG, ADD_WRONG)
        assert (await run_once(editor, uri))["attempts"] == 2
    finally:
        await stop_editor(editor)


async def test_a_key_in_the_editor_settings_is_refused_and_never_shown(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    editor = await start_editor(
        "neovim", project, server_env(fake.base_url, tmp_path), {"apiKey": "sk-typed-into-settings-777"}
    )
    try:
        editor.open("mod.py", ADD_STUB)
        await editor.code_actions(editor.uri("mod.py"), STUB_LINE)
        said = editor.messages() + editor.logs()
        assert any("apiKey" in m and "environment variable" in m for m in said)
        assert not any("sk-typed-into-settings-777" in m or API_KEY in m for m in said)
    finally:
        await stop_editor(editor)


async def test_diagnostics_can_be_turned_off_and_on(fake: ScriptedModel, tmp_path: Path):
    """Two workspace folders, diagnostics off in the first. Doctest checks run one after another in the
    order they were asked for, so once the second folder's file, opened last, has its diagnostics, the
    first one's would have been there too."""
    off, on = new_project(tmp_path / "off"), new_project(tmp_path / "on")
    editor = await start_editor(
        "visual-studio-code", off, server_env(fake.base_url, tmp_path), TEST_OPTIONS, folders=[off, on]
    )
    editor.client.set_configuration({"diagnostics": False}, section="pycapsule", scope_uri=off.as_uri())
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    try:
        quiet = editor.open(off / "quiet.py", BROKEN_DOUBLE)
        checked = editor.open(on / "checked.py", BROKEN_DOUBLE)
        [diagnostic] = await editor.diagnostics_for(checked, bool)
        assert diagnostic.message == "doctest failed: expected 4, got 6"
        assert quiet not in editor.client.diagnostics, "no diagnostics where they are off"
        assert not [m for m in editor.logs() if "doctests of quiet.py" in m], "and no check ran"

        editor.client.set_configuration({"diagnostics": True}, section="pycapsule", scope_uri=off.as_uri())
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        [diagnostic] = await editor.diagnostics_for(quiet, bool)
        assert diagnostic.message == "doctest failed: expected 4, got 6"

        editor.client.set_configuration({"diagnostics": False}, section="pycapsule", scope_uri=off.as_uri())
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        assert await editor.diagnostics_for(quiet, lambda found: not found) == []
        kept = [d.message for d in editor.client.diagnostics[checked]]
        assert kept == ["doctest failed: expected 4, got 6"], "the other folder keeps its diagnostics"
    finally:
        await stop_editor(editor)


async def test_each_workspace_folder_and_project_has_its_own_settings(fake: ScriptedModel, tmp_path: Path):
    """Two folders; the first holds a second project. The CLI's rule: the nearest pyproject.toml,
    under the editor's values for the file's folder."""
    first, second = tmp_path / "first", tmp_path / "second"
    inner = first / "packages" / "inner"
    inner.mkdir(parents=True)
    second.mkdir()
    (first / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 1\n")
    (inner / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 2\n")
    (second / "pyproject.toml").write_text("[tool.pycapsule]\nmax_attempts = 4\n")
    editor = await start_editor(
        "visual-studio-code",
        first,
        server_env(fake.base_url, tmp_path),
        configuration={"modelRetries": 0},
        folders=[first, second],
    )
    editor.client.set_configuration({"maxAttempts": 3}, section="pycapsule", scope_uri=second.as_uri())
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    try:
        for folder, attempts in ((first, 1), (inner, 2), (second, 3)):
            uri = editor.open(folder / "mod.py", ADD_STUB)
            fake.queue(*[ADD_WRONG] * attempts)
            result = await run_once(editor, uri)
            assert (result["status"], result["attempts"]) == ("gave_up", attempts), (folder, result)
        assert fake.pending == 0
    finally:
        await stop_editor(editor)


async def failing_functions(editor, uri: str) -> set[str]:
    """Names of the functions whose doctests fail, from the diagnostics (always_fails always does)."""
    found = await editor.diagnostics_for(uri, bool)
    lines = editor.texts[uri].splitlines()
    names = set()
    for diagnostic in found:
        above = lines[: diagnostic.range.start.line + 1]
        names.add(next(line for line in reversed(above) if line.startswith("def ")).split("(")[0][4:])
    return names


async def test_doctests_import_from_the_interpreter_the_editor_selected(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    python = environment_with_a_module(tmp_path)
    editor = await start_editor(
        "visual-studio-code", project, server_env(fake.base_url, tmp_path), configuration={"python": python}
    )
    try:
        uri = editor.open("mod.py", SELECTED_ENV_SOURCE)
        assert await failing_functions(editor, uri) == {"always_fails"}
    finally:
        await stop_editor(editor)
    # the same file, without the setting: the server's own interpreter lacks the module
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path))
    try:
        uri = editor.open("mod.py", SELECTED_ENV_SOURCE)
        assert await failing_functions(editor, uri) == {"always_fails", "from_the_selected_environment"}
    finally:
        await stop_editor(editor)


async def test_a_project_file_cannot_choose_the_interpreter(
    fake: ScriptedModel, project: Path, tmp_path: Path
):
    python = environment_with_a_module(tmp_path)
    (project / "pyproject.toml").write_text(f'[tool.pycapsule]\npython = "{python}"\n')
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path))
    try:
        uri = editor.open("mod.py", SELECTED_ENV_SOURCE)
        assert "from_the_selected_environment" in await failing_functions(editor, uri)
        warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
        assert any("'python'" in m and "may not choose where code runs" in m for m in warnings), warnings
    finally:
        await stop_editor(editor)


async def test_the_status_follows_a_settings_change(fake: ScriptedModel, project: Path, tmp_path: Path):
    editor = await start_editor("visual-studio-code", project, server_env(fake.base_url, tmp_path))
    try:
        port = fake.base_url.split(":")[2].split("/")[0]
        first = await editor.wait_for_status(lambda status: True)
        shown = f"http://127.0.0.1:{port}/v1 (model fake-coder)"
        assert first["state"] == "idle" and first["endpoint"] == shown, first

        editor.client.set_configuration({"model": "other-coder"}, section="pycapsule")
        editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        other = "(model other-coder)"
        await editor.wait_for_status(lambda status: str(status.get("endpoint")).endswith(other))
    finally:
        await stop_editor(editor)


async def test_the_status_names_the_endpoint_in_use(fake: ScriptedModel, project: Path, tmp_path: Path):
    """Status bars show where the code goes: from the first status on, before any run, and in every
    status of a run; credentials in the URL are masked."""
    base_url = fake.base_url.replace("http://", "http://bob:hunter2@")
    env = server_env(base_url, tmp_path)
    editor = await start_editor("visual-studio-code", project, env, configuration={"maxAttempts": 1,
                                                                                      "modelRetries": 0})
    try:
        fake.queue(ADD_WRONG)
        result = await run_once(editor, editor.open("mod.py", ADD_STUB))
        assert result["status"] == "gave_up"
        shown = fake.base_url.replace("http://", "http://***@") + " (model fake-coder)"
        first = editor.statuses[0]
        assert (first["state"], first["runId"], first["endpoint"]) == ("idle", None, shown)
        of_run = [s for s in editor.statuses if s["runId"] is not None]
        assert of_run and all(s["endpoint"] == shown for s in of_run)
        assert not any("hunter2" in str(s) for s in editor.statuses)
        assert not any("hunter2" in m.message for m in editor.client.log_messages)
    finally:
        await stop_editor(editor)
