"""The reference: what `pytest --doctest-modules` says about each doctest item of some modules."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

COLLECTION_ERROR = "<collection error>"


def pytest_doctests(rootdir: Path, files: list[Path], junit: Path, timeout: float = 300) -> dict[str, str]:
    """Run `pytest --doctest-modules FILES` in `rootdir` (its own config applies, minus `addopts`, which
    names plugins such as pytest-cov) and return doctest item name -> "passed" | "failed" | "skipped".

    Item names are pytest's: `pkg.mod.func`, `pkg.mod.Class.method`, `pkg.mod` (the module docstring),
    `pkg.mod.__test__.key`. A module that cannot be collected maps `<collection error> path` -> "failed".
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    command = [sys.executable, "-m", "pytest", "--doctest-modules", "-p", "no:cacheprovider",
               "-o", "addopts=", "-q", f"--junitxml={junit}", *(str(f) for f in files)]
    done = subprocess.run(command, cwd=rootdir, env=env, capture_output=True, text=True, timeout=timeout)
    if not junit.is_file():
        raise AssertionError(f"pytest wrote no report (exit {done.returncode}): {done.stdout}{done.stderr}")
    results: dict[str, str] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name = case.get("name", "")
        if case.find("error") is not None and not case.get("classname"):
            results[f"{COLLECTION_ERROR} {name}"] = "failed"
        elif case.find("failure") is not None or case.find("error") is not None:
            results[name] = "failed"
        elif case.find("skipped") is not None:
            results[name] = "skipped"
        else:
            results[name] = "passed"
    return results
