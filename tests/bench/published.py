"""measurements/results/publish.py, imported by path: the step that moves a finished run's records out of
docs/ (to data/records/)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.checkout import ROOT

RESULTS = ROOT / "docs" / "results"
SCRIPTS = ROOT / "measurements" / "results"
"""The scripts that make, publish and compare the runs under docs/results."""


def publish_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("publish_results", SCRIPTS / "publish.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def publish(folder: Path, records_root: Path) -> list[Path]:
    published: list[Path] = publish_script().publish(folder, records_root)
    return published
