"""`embedded_model_file`: the embedded model runs a GGUF file of the user's own (the tiny one, copied under a
name of the user's), with nothing downloaded and its model name taken from the file's name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pycapsule.config import load_settings
from pycapsule.embedded_model.catalog import CATALOG
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.model_progress import Progress
from pycapsule.model_source import ModelSource


@pytest.fixture
def own_file(tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny GGUF as the user's own file, and an empty model dir: any install would show there."""
    mine = tmp_path / "mine" / "My-Tiny.Q4_K_M.gguf"
    mine.parent.mkdir()
    shutil.copyfile(tiny_model_dir / CATALOG["tiny"].filename, mine)
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "1")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYCAPSULE_BASE_URL", "PYCAPSULE_EMBEDDED_MODEL_SIZE"):
        monkeypatch.delenv(name, raising=False)
    return mine


def test_a_run_uses_your_own_file_and_downloads_nothing(own_file: Path, tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_FILE": str(own_file)})
    source = ModelSource(loaded.settings)
    assert source.settings.label == f"embedded my-tiny.q4_k_m (your own file {own_file})"
    lines = [progress.note for progress in _started(source) if progress.note]
    programmer = source.programmer()
    assert programmer.settings.model == "my-tiny.q4_k_m"
    assert lines[0] == (f"using your own model file {own_file} (embedded_model_file: not downloaded, "
                        "not pinned)")
    assert source._endpoint.state.model_path == str(own_file)
    assert not (tmp_path / "models").exists(), "nothing was installed"


def _started(source: ModelSource) -> list[Progress]:  # what a run shows while the model starts
    ready = source.ready()
    said: list[Progress] = []
    try:
        while True:
            said.append(next(ready))
    except StopIteration:
        return said


def test_a_missing_or_foreign_file_is_one_sentence_and_nothing_is_downloaded(own_file: Path,
                                                                               tmp_path: Path) -> None:
    missing = own_file.with_name("gone.gguf")
    with pytest.raises(ModelInstallError, match=rf"^the embedded_model_file {missing} does not exist\.$"):
        start_local_endpoint(own_file=str(missing))
    text = own_file.with_name("notes.gguf")
    text.write_text("not a model\n")
    with pytest.raises(ModelInstallError, match=r"is not a GGUF file \(it does not start with GGUF\)\.$"):
        start_local_endpoint(own_file=str(text))
    assert not (tmp_path / "models").exists()


def test_model_install_and_status_say_runs_use_your_own_file(own_file: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYCAPSULE_EMBEDDED_MODEL_FILE": str(own_file),
           "PYCAPSULE_CONFIG": str(tmp_path / "no-config.toml")}
    command = [sys.executable, "-m", "pycapsule", "model"]
    installed = subprocess.run([*command, "install"], capture_output=True, text=True, env=env, timeout=120)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.strip() == str(own_file)
    assert "nothing to install" in installed.stderr
    status = subprocess.run([*command, "status"], capture_output=True, text=True, env=env, timeout=120)
    assert (f"runs use your own model file {own_file} (embedded_model_file, set in "
            "$PYCAPSULE_EMBEDDED_MODEL_FILE): not downloaded, not pinned") in status.stdout.splitlines()
    assert not (tmp_path / "models").exists()
