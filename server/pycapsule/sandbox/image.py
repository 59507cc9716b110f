"""The Docker sandbox image, built without any registry: debootstrap a minimal Debian with python3,
then `docker import` it. The tag carries a hash of the recipe, so a changed recipe is a new image."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "include": ["python3"],
    "mirror": os.environ.get("PYCAPSULE_DEBIAN_MIRROR", "http://deb.debian.org/debian"),
    "layout": 1,
}
REPOSITORY = "pycapsule-sandbox"
# Everything the image needs at run time is the interpreter and its stdlib; the rest is trimmed.
TRIM = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale")


class ImageBuildError(RuntimeError):
    """The image could not be built; the message says which step failed."""


def recipe_hash() -> str:
    stable = {k: v for k, v in RECIPE.items() if k != "mirror"}
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:12]


def image_tag() -> str:
    return os.environ.get("PYCAPSULE_DOCKER_IMAGE") or f"{REPOSITORY}:{recipe_hash()}"


def _run(step: str, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError as error:
        raise ImageBuildError(f"{step}: {argv[0]} is not installed (apt-get install {argv[0]})") from error
    except subprocess.CalledProcessError as error:
        tail = (error.stderr or error.stdout or "").strip().splitlines()[-3:]
        raise ImageBuildError(f"{step} failed: {' / '.join(tail)}") from error


def build_rootfs(target: Path, say: Callable[[str], None]) -> str:
    """debootstrap into target; returns the Python version it holds."""
    if os.geteuid() != 0:
        raise ImageBuildError("building the image needs root (debootstrap and chroot)")
    say(f"debootstrap {RECIPE['suite']} ({RECIPE['variant']}, {', '.join(RECIPE['include'])}) "
        f"from {RECIPE['mirror']}")
    _run("debootstrap", ["debootstrap", f"--variant={RECIPE['variant']}",
                         f"--include={','.join(RECIPE['include'])}", str(RECIPE["suite"]), str(target),
                         str(RECIPE["mirror"])], timeout=1200)
    for part in TRIM:
        shutil.rmtree(target / part, ignore_errors=True)
        (target / part).mkdir(parents=True, exist_ok=True)
    version = _run("python check", ["chroot", str(target), "/usr/bin/python3", "-c",
                                    "import doctest, sys; print(sys.version.split()[0])"]).stdout.strip()
    (target / "work").mkdir(exist_ok=True)
    return version


def build_image(client: object, say: Callable[[str], None] = print) -> tuple[str, str]:
    """Build and tag the image; returns (tag, python version)."""
    tag = image_tag()
    repository, _, version_tag = tag.partition(":")
    with tempfile.TemporaryDirectory(prefix="pycapsule-image-") as scratch:
        rootfs = Path(scratch) / "rootfs"
        python = build_rootfs(rootfs, say)
        archive = Path(scratch) / "rootfs.tar"
        say("packing the root file system")
        with tarfile.open(archive, "w") as tar:
            for entry in sorted(os.listdir(rootfs)):
                tar.add(rootfs / entry, arcname=entry)
        say(f"docker import as {tag}")
        client.api.import_image_from_file(  # type: ignore[attr-defined]
            str(archive), repository=repository, tag=version_tag or "latest",
            changes=["WORKDIR /work", "ENV LANG=C.UTF-8", f"ENV PYCAPSULE_PYTHON={python}"],
        )
    return tag, python


def image_python(client: object, tag: str) -> str | None:
    """The Python version recorded in the image, or None when there is no such image."""
    import docker.errors

    try:
        image = client.images.get(tag)  # type: ignore[attr-defined]
    except docker.errors.ImageNotFound:
        return None
    for entry in image.attrs.get("Config", {}).get("Env") or []:
        if entry.startswith("PYCAPSULE_PYTHON="):
            return entry.partition("=")[2]
    return "unknown"
