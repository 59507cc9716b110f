"""GPU layers (issue 68): `model_gpu_layers` layers go to a GPU only where the installed llama.cpp runtime
reports a GPU device; without one the model runs on the CPU and says so in one sentence, never fails.

This machine has no GPU: the runtime's device list is replaced by one with a GPU where a test needs one;
the shared-server tests run the real runtime and hold whatever it reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import xllamacpp
from pycapsule.config import USER_ONLY_KEYS, load_settings
from pycapsule.embedded_model import runtime
from pycapsule.embedded_model.endpoint import start_local_endpoint
from pycapsule.embedded_model.serve import ServerOptions, _params, gpu_devices, gpu_offload
from pycapsule.embedded_model.shared import unusable

KINDS = xllamacpp.ggml_backend_dev_type
CPU = {"name": "CPU", "description": "some CPU", "type": KINDS.GGML_BACKEND_DEVICE_TYPE_CPU}
GPU = {"name": "CUDA0", "description": "some GPU", "type": KINDS.GGML_BACKEND_DEVICE_TYPE_GPU}
NO_GPU = "reports no GPU device: the model runs on the CPU"


def real_gpus() -> bool:
    kinds = (KINDS.GGML_BACKEND_DEVICE_TYPE_GPU, KINDS.GGML_BACKEND_DEVICE_TYPE_IGPU)
    return any(device["type"] in kinds for device in xllamacpp.get_device_info())


@pytest.fixture
def with_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xllamacpp, "get_device_info", lambda: [CPU, GPU])


@pytest.fixture
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xllamacpp, "get_device_info", lambda: [CPU])


def test_layers_go_to_a_gpu_the_runtime_reports(with_a_gpu: None) -> None:
    assert gpu_devices() == ["CUDA0 (some GPU)"]
    assert _params(ServerOptions(Path("m.gguf"), "m", gpu_layers=20)).n_gpu_layers == 20
    assert gpu_offload(20).note() is None
    # asked for none: none, although a GPU build of llama.cpp would offload every layer by default
    assert _params(ServerOptions(Path("m.gguf"), "m")).n_gpu_layers == 0


def test_without_a_gpu_device_the_cpu_runs_the_model_and_one_sentence_says_so(cpu_only: None) -> None:
    assert _params(ServerOptions(Path("m.gguf"), "m", gpu_layers=20)).n_gpu_layers == 0
    offload = gpu_offload(20)
    assert (offload.layers, offload.device) == (0, "")
    assert offload.note() == ("model_gpu_layers asks for 20 layers on a GPU, but the llama.cpp runtime "
                              f"(xllamacpp) {NO_GPU}")
    assert gpu_offload(0).note() is None


def test_the_installed_runtime_is_asked_not_assumed() -> None:
    offload = gpu_offload(6)
    assert offload.layers == (6 if real_gpus() else 0)
    assert (offload.note() is None) == real_gpus()


def test_a_project_cannot_make_your_machine_offload_to_its_gpu(tmp_path: Path) -> None:
    assert "model_gpu_layers" in USER_ONLY_KEYS
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nmodel_gpu_layers = 99\n")
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_CONFIG": str(tmp_path / "none.toml")})
    assert loaded.settings.model_gpu_layers == 0
    assert any("model_gpu_layers" in warning and "is ignored" in warning for warning in loaded.warnings)


def test_a_server_offloading_other_layers_to_its_gpu_is_replaced(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    info = model.stat()
    state = runtime.ServerState(
        pid=os.getpid(), start_ticks=runtime.start_ticks(os.getpid()), base_url="http://127.0.0.1:9/v1",
        alias="m", model_path=str(model), model_size=info.st_size, model_mtime_ns=info.st_mtime_ns,
        threads=1, idle_timeout=60.0, started=0.0, gpu_layers_asked=8, gpu_layers=8, gpu_device="CUDA0")
    assert unusable(state, model, 0) == "it offloads 8 layers to its GPU and model_gpu_layers asks for 0"


def test_an_older_servers_state_file_still_reads(tmp_path: Path) -> None:
    """A server started before the setting existed goes on being found (no second server beside it)."""
    old = {"pid": 1, "start_ticks": None, "base_url": "http://127.0.0.1:9/v1", "alias": "m",
           "model_path": "m.gguf", "model_size": 1, "model_mtime_ns": 1, "threads": 2, "idle_timeout": 900.0,
           "started": 0.0}
    state = runtime.ServerState.from_json(json.dumps(old))
    assert state is not None and (state.gpu_layers_asked, state.gpu_layers, state.gpu_device) == (0, 0, "")


@pytest.mark.skipif(real_gpus(), reason="the installed runtime reports a GPU device")
def test_the_shared_server_asked_for_gpu_layers_runs_on_the_cpu_and_says_so(
        tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime_dir: Path) -> None:
    monkeypatch.setenv("PYCAPSULE_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("PYCAPSULE_MODEL_GPU_LAYERS", "4")
    said: list[str] = []
    first = start_local_endpoint("tiny", said.append)
    assert first.state.gpu_layers_asked == 4 and first.state.gpu_layers == 0
    assert [line for line in said if NO_GPU in line] == [
        f"model_gpu_layers asks for 4 layers on a GPU, but the llama.cpp runtime (xllamacpp) {NO_GPU}"]
    log = runtime.log_file(runtime_dir, first.model).read_text()
    assert NO_GPU in log
    env = {**os.environ}
    status = subprocess.run([sys.executable, "-m", "pycapsule", "model", "status"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert status.returncode == 0, status.stderr
    assert f"{NO_GPU}." in status.stdout
    # asking for none now: a restart would change nothing without a GPU, so the same server serves
    monkeypatch.setenv("PYCAPSULE_MODEL_GPU_LAYERS", "0")
    said.clear()
    second = start_local_endpoint("tiny", said.append)
    assert second.pid == first.pid and not [line for line in said if NO_GPU in line]
