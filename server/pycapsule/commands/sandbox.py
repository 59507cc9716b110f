"""`pycapsule sandbox build-image | doctor`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pycapsule.commands import SUMMARIES, wording
from pycapsule.commands.options import Subcommands
from pycapsule.exit_codes import ExitCode
from pycapsule.interpreter import Interpreter
from pycapsule.sandbox.api import SandboxUnavailable


def build_image(args: argparse.Namespace) -> int:
    from pycapsule.sandbox.docker import connect
    from pycapsule.sandbox.image import ImageBuildError, image_python, image_tag, recipe_hash
    from pycapsule.sandbox.image import build_image as build

    try:
        client = connect()
    except SandboxUnavailable as error:
        print(f"pycapsule sandbox build-image: {error}", file=sys.stderr)
        return ExitCode.SANDBOX_UNAVAILABLE
    tag = image_tag()
    python = image_python(client, tag)
    cache_dir = os.environ.get("PYCAPSULE_IMAGE_CACHE")
    cached = Path(cache_dir) / f"{recipe_hash()}.tar" if cache_dir else None
    if python is None and cached is not None and cached.is_file():
        print(wording.image_loading(tag, cached))
        with cached.open("rb") as handle:
            client.images.load(handle.read())
        python = image_python(client, tag)
    if python is not None:
        print(wording.image_ready(tag, python))
        return 0
    try:
        tag, python = build(client, say=lambda line: print(line, flush=True))
    except ImageBuildError as error:
        print(f"pycapsule sandbox build-image: {error}", file=sys.stderr)
        return ExitCode.FAILED
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")
        with partial.open("wb") as handle:
            for chunk in client.images.get(tag).save(named=True):
                handle.write(chunk)
        partial.replace(cached)
        print(wording.image_saved(tag, cached))
    print(wording.image_built(tag, python))
    return 0


def doctor(args: argparse.Namespace) -> int:
    from pycapsule.sandbox.select import available_backends

    working = 0
    available = available_backends()
    for name, problem in available.items():
        if problem is None:
            working += 1
            print(wording.backend_works(name))
        else:
            print(wording.backend_unavailable(name, problem))
    if available.get("bwrap", "") is None:
        print(wording.doctor_line("bwrap limits", bwrap_whole_job_limit()))
    print(wording.doctor_line("python", here_interpreter().describe()))
    return ExitCode.OK if working else ExitCode.SANDBOX_UNAVAILABLE


def here_interpreter() -> Interpreter:
    """The interpreter a job for the project in the current folder would run with."""
    from pycapsule.config import load_settings, project_root
    from pycapsule.interpreter import settings_interpreter

    loaded = load_settings(Path.cwd())
    return settings_interpreter(loaded, project_root(Path.cwd()))


def bwrap_whole_job_limit() -> str:
    """Which whole-sandbox limit bwrap gets on this machine, said in one line."""
    from pycapsule.sandbox.bwrap import BwrapSandbox
    from pycapsule.sandbox.job_limits import DESCRIPTIONS

    with BwrapSandbox() as sandbox:
        sandbox.start()
        kind = sandbox.whole_job_limit
    return wording.job_limit(kind, DESCRIPTIONS[kind])


def register(commands: Subcommands) -> None:
    sandbox = commands.add_parser("sandbox", help=SUMMARIES["sandbox"])
    actions = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="ACTION")
    actions.add_parser("build-image", help="build the Docker sandbox image without a registry")
    actions.add_parser("doctor", help="say which backends work here and why not")


def run(args: argparse.Namespace) -> int:
    actions = {"build-image": build_image, "doctor": doctor}
    return actions[args.sandbox_command](args)
