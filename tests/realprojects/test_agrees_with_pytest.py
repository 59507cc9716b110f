"""`pycapsule check` on real libraries' source trees agrees with `pytest --doctest-modules`, function by
function: the same items pass, fail, or verify nothing (all examples skipped); a module pytest cannot
import is one pycapsule cannot import either.

How it runs, to stay within a couple of minutes for all libraries: pytest once per library over all its
modules (a collection error stays the module's own item, so nothing is lost against one run per module),
and `pycapsule check PATH --json` through the CLI's own entry point called in this process once per
module: the same code path as the command, without a Python start-up and imports per module."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pycapsule.__main__ import main
from pycapsule.bench.tasks import DatasetError

from tests.projects.cli import outcomes
from tests.projects.pytest_reference import COLLECTION_ERROR, pytest_doctests_by_file
from tests.realprojects.libraries import LIBRARIES, Library

IMPORT = "<import>"
"""The module itself: "failed" when it cannot be imported (pytest: a collection error)."""


def source_tree_or_skip(library: Library) -> Path:
    try:
        return library.tree()
    except DatasetError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"tests/realprojects/setup.sh must have fetched it: {error}")
        pytest.skip(f"{error} (tests/realprojects/setup.sh fetches it)")


def check(module: Path) -> dict[str, Any]:
    """`pycapsule check MODULE --json`, run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", str(module), "--json"])
    assert code in (0, 1), f"pycapsule check {module} exited {code}: {err.getvalue()}"
    return json.loads(out.getvalue())


def ours(report: dict[str, Any]) -> dict[str, str]:
    results = outcomes(report)
    if report["status"] != "ok":
        results[IMPORT] = "failed"
    return results


def reference(library: Library, tree: Path, junit: Path) -> dict[Path, dict[str, str]]:
    """module -> {qualname as check names it -> pytest's outcome}: `func`, `Class.method`, `<module>` for
    the module docstring, `__test__.key`; `<import>` when pytest could not import the module."""
    modules = library.modules(tree)
    by_file = pytest_doctests_by_file(tree, modules, junit)
    by_module: dict[Path, dict[str, str]] = {}
    for module in modules:
        dotted = library.dotted_name(tree, module)
        items = by_file.get(".".join(module.relative_to(tree).with_suffix("").parts), {})
        by_module[module] = {_qualname(name, dotted): outcome for name, outcome in items.items()}
    return by_module


def _qualname(item: str, module: str) -> str:
    if item == COLLECTION_ERROR:
        return IMPORT
    if item == module:
        return "<module>"
    assert item.startswith(module + "."), f"{item} is not an item of {module}"
    return item[len(module) + 1:]


def disagreements(library: Library, tree: Path, junit: Path) -> tuple[list[str], set[str]]:
    """One line per item where pycapsule and pytest differ and the library's `known` list does not
    say why (one line for a whole module that only one of them imports), and the known items that did
    differ. Items that neither runs (no examples) are not compared."""
    found, explained = [], set()
    for module, expected in reference(library, tree, junit).items():
        report = check(module)
        got = ours(report)
        dotted = library.dotted_name(tree, module)
        if (IMPORT in got) != (IMPORT in expected):
            if dotted in library.known:
                explained.add(dotted)
            else:
                pytest_can = "cannot import it" if IMPORT in expected else "imports it"
                found.append(f"{dotted}: pytest {pytest_can}, "
                             f"pycapsule {'cannot' if IMPORT in got else 'can'} ({_detail(report, IMPORT)})")
            continue
        for qualname in sorted(expected.keys() | got.keys()):
            theirs, mine = expected.get(qualname), got.get(qualname)
            if theirs == mine or (mine == "skipped" and theirs is None):
                continue  # agreed, or a docstring without examples: pytest collects no item for it
            item = dotted if qualname == "<module>" else f"{dotted}.{qualname}"
            if item in library.known:
                explained.add(item)
                continue
            detail = _detail(report, qualname)
            found.append(f"{item}: pytest {theirs or 'has no item'}, pycapsule {mine or 'has no result'}"
                         + (f" ({detail})" if detail else ""))
    return found, explained


def _detail(report: dict[str, Any], qualname: str) -> str:
    if report.get("module_error"):
        error = report["module_error"]
        return f"the module raised {error['type']}: {error['message']} at line {error['line']}"
    if report["status"] != "ok":
        return f"{report['status']}: {report.get('detail', '')}"
    for function in report["functions"]:
        if function["qualname"] == qualname and (function["failures"] or function["parse_error"]):
            if function["parse_error"]:
                return str(function["parse_error"])
            first = function["failures"][0]
            said = first["exception"]["message"] if first.get("exception") else first["got"]
            return (f"line {first['line']}: >>> {first['source'].strip()}, "
                    f"expected {first['expected']!r}, got {said!r}")
    return ""


@pytest.mark.parametrize("library", LIBRARIES, ids=[lib.name for lib in LIBRARIES])
def test_check_agrees_with_pytest_doctest_modules(library: Library, tmp_path: Path) -> None:
    # a copy: pytest runs the doctests in the tree, and some write files there (networkx's readers)
    tree = Path(shutil.copytree(source_tree_or_skip(library), tmp_path / "tree", symlinks=True))
    found, explained = disagreements(library, tree, tmp_path / "junit.xml")
    assert not found, f"{len(found)} disagreement(s) with pytest --doctest-modules:\n" + "\n".join(found)
    stale = sorted(library.known.keys() - explained)
    assert not stale, f"these known disagreements no longer happen: remove them from the list: {stale}"
