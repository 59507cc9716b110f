"""Nothing loads the model when nothing needs it (issue 48 item 4): `generate` on a function that already
passes its examples, and `check`, neither start nor contact the embedded model, nor install it.

Each run has a runtime folder of its own (conftest.py `runtime_dir`): a model server started or found
leaves its lock and state there. The model folder is either the tiny model's (installed: a start would
load it) or an empty one with pip offline (an install would leave its staging folder there).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.exit_codes import ExitCode

from tests.engine.test_generate_cli import on_a_terminal
from tests.models.servers import model_servers

PASSING = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n'


@pytest.fixture(params=["installed", "not-installed"])
def model_dir(request: pytest.FixtureRequest, tiny_model_dir: Path, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    if request.param == "installed":
        return tiny_model_dir
    empty = tmp_path / "no-models"
    empty.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # an install could fetch nothing, and would fail fast
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    return empty


def run(*args: str, cwd: Path, model_dir: Path, terminal: bool = False) -> subprocess.CompletedProcess[str]:
    """The command; with `terminal`, its stderr is a terminal (where `generate` installs a missing model
    before a run that needs it, with a progress bar)."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYCAPSULE_MODEL", "PYCAPSULE_BASE_URL",
                           "PYCAPSULE_MODEL_SIZE")}
    env.update(PYCAPSULE_MODEL_DIR=str(model_dir), PYCAPSULE_EMBEDDED_MODEL_SIZE="tiny",
               PYCAPSULE_HISTORY=str(cwd / "history.sqlite3"))
    command = [sys.executable, "-m", "pycapsule", *args]
    if terminal:
        return on_a_terminal(command, env, cwd)
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
@pytest.mark.parametrize("command", [["generate", "mod.py::add"], ["generate", "mod.py::add", "--write"],
                                     ["check", "mod.py"]])
def test_a_passing_function_and_check_never_start_contact_or_install_the_model(
        command: list[str], terminal: bool, model_dir: Path, tmp_path: Path, runtime_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    project.chmod(0o755)  # the sandbox reads the project as an unprivileged uid
    (project / "mod.py").write_text(PASSING)
    models_before = sorted(model_dir.iterdir())
    done = run(*command, cwd=project, model_dir=model_dir, terminal=terminal)
    assert done.returncode == ExitCode.OK, done.stderr
    if command[0] == "generate":
        assert "already pass" in done.stderr, done.stderr
    assert "local model" not in done.stderr and "starting the model" not in done.stderr, done.stderr
    assert model_servers(runtime_dir) == []
    assert sorted(runtime_dir.iterdir()) == [], "a model server was started or looked for"
    assert sorted(model_dir.iterdir()) == models_before, "the model was installed"
