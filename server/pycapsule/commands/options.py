"""Options several subcommands share, declared once: the target, --json, --model, the model timeouts,
--backend. Cheap to import: what checks a value is imported when a value is checked."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Subcommands = argparse._SubParsersAction
"""What `register(commands)` in each `pycapsule.commands` module adds its subcommand to."""


def setting(key: str) -> Callable[[str], object]:
    """argparse `type=` for a setting: a bad value is a usage error (exit 2), by the settings' own rule."""

    def parse(text: str) -> object:
        from pycapsule.config import flag_type

        return flag_type(key)(text)

    parse.__name__ = key
    return parse


def backend_name(text: str) -> str:
    from pycapsule.commands import wording
    from pycapsule.sandbox.select import BACKENDS

    if text not in BACKENDS:
        raise argparse.ArgumentTypeError(wording.no_backend(text, BACKENDS))
    return text


def add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="PATH[::QUALNAME]", help="a Python file, optionally ::Class.method")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=setting("model"),
        metavar="NAME",
        help="model name at the endpoint (default: $PYCAPSULE_MODEL, or the embedded local model)",
    )


def add_model_timeouts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inactivity-timeout", type=setting("inactivity_timeout"), metavar="S",
                        help="give up when the model sends nothing for S seconds (default 60)")
    parser.add_argument("--request-timeout", type=setting("request_timeout"), metavar="S",
                        help="seconds per attempt for the whole answer, retries included (default 300)")


def python_path(text: str) -> object:
    """--python: a path, relative to the current folder or absolute."""
    import os

    return setting("python")(os.path.abspath(os.path.expanduser(text)))


def add_python(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--python", type=python_path, metavar="PATH",
                        help="the interpreter whose packages the examples and tests see (default: the active "
                             "$VIRTUAL_ENV, else the project's .venv or venv, else pycapsule's own)")


def add_backend(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        metavar="NAME",
        type=backend_name,
        help="sandbox backend: bwrap, docker or unsafe-subprocess (default: the first that works here)",
    )
