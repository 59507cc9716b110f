"""The Hugging Face source: one model file streamed over HTTPS from its repository at a pinned revision.

`{endpoint}/{repo}/resolve/{revision}/{file}`, the endpoint `$HF_ENDPOINT` or https://huggingface.co (the
Hub answers with a redirect to its file store, followed). The standard library's client: it honours the
proxy variables (`https_proxy`, `no_proxy`, ...) and keeps the `Range` header across the redirect, and the
file needs nothing more. The download goes to a file in the staging directory that outlives a failed run:
the next try asks only for the bytes it lacks (HTTP Range), and a connection cut in the middle is resumed
at once while each try brings bytes. No token is sent: the model repositories are public.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from pycapsule import __version__
from pycapsule.embedded_model.catalog import HubFile, ModelSpec
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.fetching import (
    CHUNK,
    Report,
    Step,
    mb,
    require_free_space,
    verify_file,
    write_failure,
)
from pycapsule.redact import mask_credentials

ENDPOINT_ENV = "HF_ENDPOINT"
DEFAULT_ENDPOINT = "https://huggingface.co"
TIMEOUT = 30.0
"""Seconds to connect, and the longest wait for the next bytes, before a try counts as cut."""
RESUMES = 3
"""Tries after a cut connection in one run, each resuming where the last one stopped."""
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def hub_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """Where the Hub is: $HF_ENDPOINT (as the huggingface_hub library reads it), else huggingface.co."""
    environ = os.environ if environ is None else environ
    return (environ.get(ENDPOINT_ENV) or "").strip().rstrip("/") or DEFAULT_ENDPOINT


class _Cut(Exception):
    """The connection ended before the file did."""


def fetch(source: HubFile, spec: ModelSpec, destination: Path, report: Report) -> None:
    """Make `destination` hold the whole file, its size and SHA-256 verified, resuming what it holds; raises
    ModelInstallError naming the Hub and what went wrong (`DiskError` for this machine's disk). A file that
    does not match is deleted: the next try starts afresh."""
    failing = f"could not download {spec.filename} from {source.label}"
    _download(source.url(hub_endpoint()), spec, destination, report, failing)
    verify_file(destination, spec, report, failing)


def _download(url: str, spec: ModelSpec, destination: Path, report: Report, failing: str) -> None:
    """Make `destination` hold as many bytes as the pinned file, resuming what it holds."""
    shown = mask_credentials(url)
    total = spec.total_size
    cuts = 0
    while True:
        have = destination.stat().st_size if destination.exists() else 0
        if have > total:
            destination.unlink()
            have = 0
        if have == total:
            return
        require_free_space(destination.parent, total - have, spec)
        if have:
            report.say(f"resuming the download at {mb(have)} of {mb(total)}")
        try:
            _fetch(url, have, destination, spec, report)
            return
        except _Cut as cut:
            got = (destination.stat().st_size if destination.exists() else 0) - have
            cuts += 1
            if got <= 0 or cuts > RESUMES:
                raise ModelInstallError(f"{failing}: the connection was cut at {mb(have + max(got, 0))} "
                                        f"of {mb(total)} ({cut}); run the install again to resume.") from None
        except urllib.error.HTTPError as error:
            raise ModelInstallError(f"{failing}: HTTP {error.code} {error.reason} for {shown}.") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", None) or error
            raise ModelInstallError(f"{failing}: cannot reach {mask_credentials(hub_endpoint())} "
                                    f"({_one_line(reason)}).") from None
        except _WrongFile as error:
            with contextlib.suppress(FileNotFoundError):
                destination.unlink()
            raise ModelInstallError(f"{failing}: {error}.") from None


class _WrongFile(Exception):
    pass


def _fetch(url: str, have: int, destination: Path, spec: ModelSpec, report: Report) -> None:
    """One request for the bytes from `have` on, appended to `destination`."""
    total = spec.total_size
    request = urllib.request.Request(url, headers={"User-Agent": f"pycapsule/{__version__}"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        # a new opener reads the proxy variables now (urlopen's shared one kept those of its first use)
        response = urllib.request.build_opener().open(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # nothing after `have`: the staged bytes are not this file's
            destination.unlink()
            return _fetch(url, 0, destination, spec, report)
        raise
    with response:
        start = _start_of(response, have, total)
        try:
            with open(destination, "ab" if start else "wb") as out:
                done = _copy(response, out, start, total, report)
                out.flush()
                os.fsync(out.fileno())
        except OSError as error:  # writing: reading errors are `_Cut`
            raise write_failure(error, destination, spec) from None
    if done < total:
        raise _Cut(f"it ended after {done} bytes")


def _copy(response: http.client.HTTPResponse, out: BinaryIO, done: int, total: int, report: Report) -> int:
    """Append the response's bytes to `out` (which holds `done` bytes); the bytes the file then holds."""
    report.step(Step("download", done, total))
    while True:
        try:
            chunk = response.read(CHUNK)
        except (OSError, http.client.HTTPException) as error:
            raise _Cut(_one_line(error)) from None
        if not chunk:
            return done
        before = done
        done += len(chunk)
        if done > total:
            raise _WrongFile(f"it sends more than the {total} bytes pinned")
        out.write(chunk)
        crossed = 4 * done // total > 4 * before // total
        line = f"downloaded {100 * done // total}% ({mb(done)} of {mb(total)})" if crossed else None
        report.step(Step("download", done, total), line)


def _start_of(response: http.client.HTTPResponse, have: int, total: int) -> int:
    """Where the response's bytes start in the file (0 when the server ignored the Range), once its size is
    the pinned one."""
    if response.status == 206:
        match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
        if match is None or int(match.group(1)) != have:
            raise _WrongFile(f"its answer to a range request starts elsewhere "
                             f"({response.headers.get('Content-Range')!r})")
        if match.group(3) != "*" and int(match.group(3)) != total:
            raise _WrongFile(f"the file there has {match.group(3)} bytes where {total} were pinned")
        return have
    length = response.headers.get("Content-Length")
    if length is not None and length.isdigit() and int(length) != total:
        raise _WrongFile(f"the file there has {length} bytes where {total} were pinned")
    return 0


def _one_line(error: object) -> str:
    return " ".join(str(error).split()) or type(error).__name__
