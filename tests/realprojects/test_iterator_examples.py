"""Iterator examples on real libraries: where a function's examples pass as written and it takes any iterable
(docs/generate.md#iterator-examples), the library's own body passes them with iterators too, except where
the library says more than its body does (listed, with why). A rule that failed correct bodies would send
the model after a fault that is not there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pycapsule.capsule import read_capsules
from pycapsule.debugging.iterator_examples import iterator_examples
from pycapsule.executor import execute
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.select import open_sandbox

from tests.realprojects.libraries import LIBRARIES
from tests.realprojects.test_agrees_with_pytest import source_tree_or_skip

_ANNOTATED_BEYOND_ITS_BODY = "annotated `Iterable[...]`, but its body indexes or adds to its argument"
KNOWN = {
    "pydash": {name: _ANNOTATED_BEYOND_ITS_BODY
               for name in ("difference", "nth", "pull_all_by", "pull_all_with", "xor")},
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = open_sandbox(None)
    yield box
    box.close()


def test_the_libraries_own_bodies_pass_their_iterator_examples(sandbox: Sandbox) -> None:
    checked, failing = 0, {}
    for library in LIBRARIES:
        tree = source_tree_or_skip(library)
        for module in library.modules(tree):
            count, failed = _check_module(module, sandbox)
            checked += count
            failing.update({f"{library.name}:{name}": failure for name, failure in failed.items()})
    known = {f"{library}:{name}" for library, names in KNOWN.items() for name in names}
    assert checked >= 100, f"only {checked} functions have iterator examples"  # 107 in these versions
    assert set(failing) == known, failing


def _check_module(module: Path, sandbox: Sandbox) -> tuple[int, dict[str, str]]:
    """How many functions of `module` pass their examples and have iterator examples; those whose
    iterator examples fail, with the first failing example."""
    source = module.read_text(encoding="utf-8")
    checked, failing = 0, {}
    for capsule in read_capsules(source, module):
        iterators = iterator_examples(capsule)
        if iterators is None:
            continue
        verdict = execute(sandbox, capsule, source, 20.0, iterators=iterators)
        if not (verdict.passed or verdict.examples_passed):
            continue  # judged by its examples as written: tests/realprojects/test_agrees_with_pytest.py
        checked += 1
        if not verdict.passed:
            failures = [f.source.strip() for report in verdict.result.functions for f in report.failures]
            failing[capsule.qualname] = (failures or [verdict.result.status])[0]
    return checked, failing
