"""Real libraries' source trees: a pinned sdist fetched with pip, checked against its SHA-256, unpacked once.

The archive is only downloaded (`pip download --no-deps --no-binary :all:`) and unpacked with tarfile's
"data" filter (no links out of the tree, no device files); nothing in it is installed. The unpacked tree
lands in the cache under a temporary name and is renamed into place whole, under a file lock, so
concurrent callers and interrupted runs never see half a tree.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from pycapsule.bench.tasks import DatasetError


@dataclass(frozen=True)
class Sdist:
    name: str
    """The distribution's name on PyPI."""
    version: str
    sha256: str
    """Of the archive pip downloads; a different archive is refused."""

    @property
    def slug(self) -> str:
        return f"{self.name.lower().replace('_', '-')}-{self.version}"


def cache_dir() -> Path:
    """`$PYCAPSULE_SDIST_CACHE`, else the user's cache folder."""
    if os.environ.get("PYCAPSULE_SDIST_CACHE"):
        return Path(os.environ["PYCAPSULE_SDIST_CACHE"])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pycapsule")) / "sdists"


def source_tree(sdist: Sdist, cache: Path | None = None) -> Path:
    """The unpacked sdist's top folder (fetched and unpacked on first use); raises DatasetError."""
    cache = cache or cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    tree = cache / sdist.slug
    if (tree / ".complete").is_file():
        return _top(tree)
    with open(cache / f".{sdist.slug}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (tree / ".complete").is_file():
            _fetch_and_unpack(sdist, tree)
    return _top(tree)


def _top(tree: Path) -> Path:
    folders = [p for p in tree.iterdir() if p.is_dir()]
    return folders[0] if len(folders) == 1 else tree


def _fetch_and_unpack(sdist: Sdist, tree: Path) -> None:
    with tempfile.TemporaryDirectory(dir=tree.parent, prefix=f".{sdist.slug}.") as staging:
        download = Path(staging) / "download"
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                   "--no-deps", "--no-binary", ":all:", "-d", str(download), f"{sdist.name}=={sdist.version}"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archives = sorted(download.glob("*")) if download.is_dir() else []
        if done.returncode != 0 or len(archives) != 1:
            detail = (done.stderr.strip().splitlines() or ["no archive was downloaded"])[-1]
            raise DatasetError(f"could not download the sdist of {sdist.name}=={sdist.version}: {detail}")
        archive = archives[0]
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != sdist.sha256:
            raise DatasetError(f"the sdist of {sdist.name}=={sdist.version} has SHA-256 {digest}, "
                               f"not the pinned {sdist.sha256}: refused")
        unpacked = Path(staging) / "tree"
        _unpack(archive, unpacked)
        (unpacked / ".complete").write_text(f"{sdist.name}=={sdist.version} sha256:{digest}\n")
        if tree.exists():
            shutil.rmtree(tree)
        unpacked.rename(tree)


def _unpack(archive: Path, into: Path) -> None:
    into.mkdir()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as handle:
            for member in handle.namelist():
                target = (into / member).resolve()
                if not target.is_relative_to(into.resolve()):
                    raise DatasetError(f"{archive.name} holds a path outside its folder: {member}")
            handle.extractall(into)
        return
    with tarfile.open(archive) as handle:
        handle.extractall(into, filter="data")
