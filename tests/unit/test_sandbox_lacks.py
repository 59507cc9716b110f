"""An example that fails only because the sandbox has no network, or lacks a file the function's own text
names, is not the body's fault; any other failure is. Built from RunResult values (no sandbox needed)."""

from __future__ import annotations

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.debugging.sandbox_lacks import sandbox_lacks
from pycapsule.sandbox.api import (
    ExampleFailure,
    ExceptionInfo,
    FunctionReport,
    MissingKind,
    MissingResource,
    RunResult,
)

SOURCE = '''
def task_func(csv_path, url="https://example.com/prices", backup="/home/user/backup.json"):
    """Load a CSV file.

    >>> df, ax = task_func("path/to/sales.csv")
    >>> df.shape
    (3, 2)
    >>> task_func("data.csv")
    'ok'
    """
'''
CAPSULE = capsule_by_qualname(SOURCE, "task_func")


def raised(source: str, kind: str, message: str, missing: MissingResource | None = None) -> ExampleFailure:
    return ExampleFailure("task_func", source, 5, "", "", ExceptionInfo(kind, message, None, None,
                                                                        missing=missing))


def result(*failures: ExampleFailure, attempted: int = 3) -> RunResult:
    return RunResult("ok", (FunctionReport("task_func", attempted, len(failures), failures),))


def no_file(path: str, kind: str = "FileNotFoundError") -> ExampleFailure:
    detail = f"[Errno 2] No such file or directory: '{path}'"
    return raised('df, ax = task_func("path/to/sales.csv")', kind, detail, MissingResource("file", detail))


NETWORK = MissingResource("network", "[Errno -3] Temporary failure in name resolution")
LATER_NAME = raised("df.shape", "NameError", "name 'df' is not defined")


def test_a_file_the_example_names_that_is_not_there_cannot_be_checked_here() -> None:
    assert sandbox_lacks(result(no_file("path/to/sales.csv")), CAPSULE) == (
        "examples cannot run in the sandbox (1 of 3): "
        "`df, ax = task_func(\"path/to/sales.csv\")` needs 'path/to/sales.csv', which is not there")


@pytest.mark.parametrize(("kind", "detail", "why"), [
    ("read-only", "[Errno 30] Read-only file system: 'path/to/sales.csv'",
     "writes 'path/to/sales.csv', which is read-only there"),
    ("denied", "[Errno 13] Permission denied: 'path/to/sales.csv'",
     "needs 'path/to/sales.csv', which the sandbox may not open"),
])
def test_a_named_file_the_sandbox_keeps_read_only_or_may_not_open_says_which(
        kind: MissingKind, detail: str, why: str) -> None:
    missing = MissingResource(kind, detail)
    failure = raised('df, ax = task_func("path/to/sales.csv")', "OSError", detail, missing)
    assert sandbox_lacks(result(failure), CAPSULE) == (
        f"examples cannot run in the sandbox (1 of 3): `df, ax = task_func(\"path/to/sales.csv\")` {why}")


def test_a_folder_on_its_way_a_default_value_or_the_name_inside_a_folder_count_too() -> None:
    for path in ("path", "path/to/", "/home/user/backup.json", "/tmp/work/data.csv"):
        assert sandbox_lacks(result(no_file(path)), CAPSULE) is not None, path


def test_a_path_the_function_does_not_name_is_the_code_s_own_mistake() -> None:
    for path in ("path/to/sale.csv", "prices.csv", "/etc/shadow", "to/sales.csv"):
        assert sandbox_lacks(result(no_file(path)), CAPSULE) is None, path


def test_an_error_that_met_no_network_cannot_be_checked_here_whatever_the_host() -> None:
    failure = raised('task_func("x")', "ConnectionError", "HTTPSConnectionPool(host='a.example')", NETWORK)
    assert sandbox_lacks(result(failure), CAPSULE) == (
        "examples cannot run in the sandbox (1 of 3): `task_func(\"x\")` needs the network")


def test_a_name_left_unset_by_such_an_example_fails_with_it_and_no_other_name_does() -> None:
    assert sandbox_lacks(result(no_file("path/to/sales.csv"), LATER_NAME), CAPSULE) is not None
    other_name = raised("ax.title", "NameError", "name 'plt' is not defined")
    assert sandbox_lacks(result(no_file("path/to/sales.csv"), other_name), CAPSULE) is None
    assert sandbox_lacks(result(LATER_NAME), CAPSULE) is None


def test_one_ordinary_failure_beside_them_makes_the_attempt_a_failure() -> None:
    wrong = ExampleFailure("task_func", 'task_func("data.csv")', 8, "'ok'\n", "'no'\n")
    assert sandbox_lacks(result(no_file("path/to/sales.csv"), wrong), CAPSULE) is None
    assert sandbox_lacks(result(wrong), CAPSULE) is None


def test_only_a_run_whose_examples_ran_and_were_all_reported_is_judged() -> None:
    failure = no_file("path/to/sales.csv")
    assert sandbox_lacks(RunResult("timeout"), CAPSULE) is None
    assert sandbox_lacks(RunResult("ok", (FunctionReport("task_func", 3, 2, (failure,)),)), CAPSULE) is None
    module_error = ExceptionInfo("ImportError", "no module", 1, "import x")
    assert sandbox_lacks(RunResult("error", (), module_error), CAPSULE) is None
    assert sandbox_lacks(RunResult("ok", (FunctionReport("task_func", 3, 0),)), CAPSULE) is None
