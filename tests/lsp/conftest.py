"""Fixtures: a scripted OpenAI-compatible endpoint in this process and `pycapsule serve` in a subprocess,
driven with the client capabilities of VS Code and, where the client's profile matters, of Neovim.

Starting a server costs seconds, so a test module shares one per profile: `editor` (VS Code) and
`each_editor` (VS Code, then Neovim) hand each test that server clean, with a folder of its own in the
module's project, and `fake` gives each test its own scripted replies. Tests that need other settings,
capabilities or workspace folders start their own server with `start_editor`, in `project`;
`project_editor` does that with VS Code's profile and `project_each_editor` for each profile, for tests whose
subject is the project (tests/projects).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol.types import ClientCapabilities

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.editor import EDITORS, Editor, Servers, server_env, start_editor, stop_editor
from tests.lsp.scripted_model import ScriptedModel

# Fast, deterministic model settings for tests: no retry waits.
TEST_OPTIONS = {"pycapsule": {"modelRetries": 0, "retryBackoff": 0, "requestTimeout": 30}}
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of a module here runs in the module's event loop, where its shared servers live."""
    in_module_loop = pytest.mark.asyncio(loop_scope="module")
    for item in items:
        if pytest_asyncio.is_async_test(item) and HERE in item.path.parents:
            item.add_marker(in_module_loop, append=False)


def new_project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n', encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def endpoint() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake(endpoint: FakeOpenAI) -> Iterator[ScriptedModel]:
    script = ScriptedModel(endpoint)
    yield script
    script.end()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of the test's own, for a server of the test's own."""
    return new_project(tmp_path / "project")


async def shared_servers(endpoint: FakeOpenAI, home: Path, options: dict) -> AsyncIterator[Servers]:
    """A module's servers, one per editor, in a project under `home`, started with `options`."""
    pool = Servers(new_project(home / "project"), server_env(endpoint.base_url, home), options)
    yield pool
    await pool.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def servers(endpoint: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    async for pool in shared_servers(endpoint, tmp_path_factory.mktemp("shared-server"), TEST_OPTIONS):
        yield pool


async def clean_editor(
    servers: Servers,
    request: pytest.FixtureRequest,
    profile: str,
    capabilities: ClientCapabilities | None = None,
) -> AsyncIterator[Editor]:
    """The module's server for `profile` (started with `capabilities` the first time), clean for the test."""
    editor = await servers.editor_for(request.node.originalname, profile, capabilities)
    try:
        yield editor
    finally:
        await editor.end_test()


@pytest_asyncio.fixture(loop_scope="module")
async def editor(
    servers: Servers, fake: ScriptedModel, request: pytest.FixtureRequest
) -> AsyncIterator[Editor]:
    """The module's VS Code server, for tests where the client's profile does not matter."""
    async for clean in clean_editor(servers, request, "visual-studio-code"):
        yield clean


@pytest_asyncio.fixture(loop_scope="module", params=EDITORS)
async def each_editor(
    servers: Servers, fake: ScriptedModel, request: pytest.FixtureRequest
) -> AsyncIterator[Editor]:
    """The module's server for each profile in turn: where position encodings or edit shapes differ."""
    async for clean in clean_editor(servers, request, request.param):
        yield clean


async def own_editor(
    profile: str, fake: ScriptedModel, project: Path, tmp_path: Path
) -> AsyncIterator[Editor]:
    editor = await start_editor(profile, project, server_env(fake.base_url, tmp_path), TEST_OPTIONS)
    try:
        yield editor
    finally:
        await stop_editor(editor)


@pytest_asyncio.fixture
async def project_editor(fake: ScriptedModel, project: Path, tmp_path: Path) -> AsyncIterator[Editor]:
    """A VS Code server of the test's own on `project`, where the client's profile does not matter."""
    async for editor in own_editor("visual-studio-code", fake, project, tmp_path):
        yield editor


@pytest_asyncio.fixture(params=EDITORS)
async def project_each_editor(
    request: pytest.FixtureRequest, fake: ScriptedModel, project: Path, tmp_path: Path
) -> AsyncIterator[Editor]:
    """A server of the test's own on `project`, for each profile in turn."""
    async for editor in own_editor(request.param, fake, project, tmp_path):
        yield editor
