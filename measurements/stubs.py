"""The module whose stubs the model tools ask for: examples/sample.py unless FILE names another."""

from __future__ import annotations

import argparse
from pathlib import Path

from pycapsule.capsule import Capsule, read_capsules

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sample.py"


def add_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", type=Path, default=SAMPLE,
                        help="a module whose stubs are asked for (default: examples/sample.py)")


def stubs_of(path: Path) -> list[Capsule]:
    """The stub functions of `path`, in file order; OSError or CapsuleError when it cannot be read."""
    return [c for c in read_capsules(path.read_text(encoding="utf-8"), path) if c.is_stub]
