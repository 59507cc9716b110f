"""The reference: what `pytest --doctest-modules` says about each doctest item of some modules."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

COLLECTION_ERROR = "<collection error>"


def pytest_doctests_by_file(rootdir: Path, files: list[Path], junit: Path,
                            timeout: float = 300) -> dict[str, dict[str, str]]:
    """Run `pytest --doctest-modules FILES` in `rootdir` (its own config applies, minus `addopts`, which
    names plugins such as pytest-cov), and return, per file, doctest item name -> "passed" | "failed" |
    "skipped". A file is named by its path relative to `rootdir`, dotted, without `.py`
    (`src.pkg.mod`), as pytest's JUnit report names it.

    Item names are pytest's: `pkg.mod.func`, `pkg.mod.Class.method`, `pkg.mod` (the module docstring),
    `pkg.mod.__test__.key`. A file that cannot be collected (imported) has the one item
    `<collection error>`, "failed".
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave the (cached, shared) source trees as they were
    command = [sys.executable, "-m", "pytest", "--doctest-modules", "-p", "no:cacheprovider",
               "-o", "addopts=", "-q", f"--junitxml={junit}", *(str(f) for f in files)]
    done = subprocess.run(command, cwd=rootdir, env=env, capture_output=True, text=True, timeout=timeout)
    if not junit.is_file():
        raise AssertionError(f"pytest wrote no report (exit {done.returncode}): {done.stdout}{done.stderr}")
    results: dict[str, dict[str, str]] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name, classname = case.get("name", ""), case.get("classname", "")
        if not classname:  # a collection error names the file
            results.setdefault(name, {})[COLLECTION_ERROR] = "failed"
        elif case.find("failure") is not None or case.find("error") is not None:
            results.setdefault(classname, {})[name] = "failed"
        elif case.find("skipped") is not None:
            results.setdefault(classname, {})[name] = "skipped"
        else:
            results.setdefault(classname, {})[name] = "passed"
    return results


def pytest_doctests(rootdir: Path, files: list[Path], junit: Path) -> dict[str, str]:
    """All files' items in one mapping; a collection error is `<collection error> FILE`."""
    flat: dict[str, str] = {}
    for file, items in pytest_doctests_by_file(rootdir, files, junit).items():
        for name, outcome in items.items():
            flat[f"{COLLECTION_ERROR} {file}" if name == COLLECTION_ERROR else name] = outcome
    return flat
