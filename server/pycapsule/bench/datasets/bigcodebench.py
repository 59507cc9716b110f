"""BigCodeBench (complete split): the prompt is the task's own stub; the hidden test is its unittest class."""

from __future__ import annotations

import sys
from pathlib import Path

from pycapsule.bench.datasets.files import field, records
from pycapsule.bench.tasks import BenchTask
from pycapsule.parsing import literal_eval

_RUN_UNITTESTS = """

def _pycapsule_run_unittests():
    import unittest as _unittest

    suite = _unittest.defaultTestLoader.loadTestsFromTestCase(TestCases)
    result = _unittest.TextTestRunner(verbosity=0).run(suite)

    def tests(outcomes):  # a test with failing subtests counts once
        return len({getattr(test, "test_case", test).id() for test, _ in outcomes})

    assert result.wasSuccessful(), (
        f"{tests(result.failures)} of {result.testsRun} tests failed, {tests(result.errors)} raised"
    )


_pycapsule_run_unittests()
"""


def third_party(libs: str | list[str]) -> tuple[str, ...]:
    """The non-standard-library modules among a task's `libs` ("['numpy', 'random']")."""
    names = literal_eval(libs) if isinstance(libs, str) else libs
    return tuple(sorted({name for name in names if name.split(".")[0] not in sys.stdlib_module_names}))


def read_bigcodebench(path: Path) -> list[BenchTask]:
    tasks = []
    for row in records(path):
        prompt = field(row, "complete_prompt", path)
        tasks.append(BenchTask(
            dataset="bigcodebench",
            task_id=field(row, "task_id", path),
            entry_point=field(row, "entry_point", path),
            prompt=prompt,
            hidden_test=field(row, "test", path) + _RUN_UNITTESTS,
            reference=prompt + field(row, "canonical_solution", path),
            timeout=60.0,
            libs=third_party(field(row, "libs", path)),
        ))
    return tasks
