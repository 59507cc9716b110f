"""What every source's download shares: its progress (plain lines and `Step`s), the disk checks, the final
size and SHA-256 check of a whole file.

`DiskError` is this machine's failure, not the source's: no other source would do better, so the install
stops there instead of trying the next source.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pycapsule.embedded_model.catalog import ModelSpec
from pycapsule.embedded_model.errors import ModelInstallError

Progress = Callable[[str], None]
CHUNK = 1 << 20
# Room left over on the disk beyond the file itself, so the install never fills it to the last byte.
_DISK_MARGIN = 16 << 20
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


@dataclass(frozen=True)
class Step:
    """Where an install is: `done` of `total` bytes of its phase (the file's data, downloaded, then
    verified)."""

    phase: Literal["download", "verify"]
    done: int
    total: int


class Report:
    """The install's lines to `on_progress`; each step to `on_step`, else its line (if any) to the lines."""

    def __init__(self, on_progress: Progress | None, on_step: Callable[[Step], None] | None) -> None:
        self.say = on_progress or (lambda _line: None)
        self.on_step = on_step

    def step(self, step: Step, line: str | None = None) -> None:
        if self.on_step is not None:
            self.on_step(step)
        elif line is not None:
            self.say(line)


class DiskError(ModelInstallError):
    """The disk under the model directory is full or cannot be written: no other source would help."""


def mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def require_free_space(directory: Path, needed: int, spec: ModelSpec) -> None:
    free = shutil.disk_usage(directory).free
    if free < needed + _DISK_MARGIN:
        raise DiskError(
            f"not enough free disk space in {directory} for the {spec.size} model: "
            f"{mb(needed + _DISK_MARGIN)} needed, {mb(free)} free."
        )


def write_failure(error: OSError, path: Path, spec: ModelSpec) -> DiskError:
    """The one sentence for a write to `path` that failed."""
    if error.errno in _DISK_FULL:
        return DiskError(f"the disk under {path.parent} is full ({mb(spec.total_size)} needed); free some "
                         "space and run the install again.")
    return DiskError(f"could not write {path}: {error.strerror or error}.")


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def verify_file(path: Path, spec: ModelSpec, report: Report, failing: str) -> None:
    """`path` holds exactly the pinned file (size and SHA-256), else it is deleted and ModelInstallError
    says so after `failing` (what could not be done)."""
    total = spec.total_size
    digest = hashlib.sha256()
    done = 0
    report.step(Step("verify", 0, total), f"verifying {spec.filename}")
    with open(path, "rb") as data:
        while chunk := data.read(CHUNK):
            done += len(chunk)
            digest.update(chunk)
            report.step(Step("verify", done, total))
    if done != total or digest.hexdigest() != spec.sha256:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise ModelInstallError(f"{failing}: the file does not match its pinned SHA-256 ({done} bytes); "
                                "it was discarded.")
