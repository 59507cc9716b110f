"""Suite-wide organisation: areas whose every test is a slow end-to-end run carry the `slow` marker here,
so the quick suite (`-m "not model and not editor and not slow"`, docs/architecture.md) leaves them out
while CI (tests/run.sh) runs them with everything else. Single slow tests elsewhere carry the marker
themselves.

CI runs the tests in two processes (pytest-xdist, `--dist loadgroup`): the real model's and the real
editors' tests all go to one of them (`ONE_AT_A_TIME`), so no two of them compete for the 2 cores and the
model servers a process shares; the other process runs the rest beside them. Tests marked `alone` run after,
with nothing beside them."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
SLOW_AREAS = {
    # each test checks `pycapsule check` against pytest on a real library's unpacked sdist
    TESTS / "realprojects",
    # each fixture project is run through a nested `pytest --doctest-modules`
    TESTS / "projects" / "test_fixtures_are_valid.py",
}


def pytest_configure() -> None:
    # A suite started where SIGINT is ignored (a background job of a shell without job control: `cmd &` in
    # a script) would pass that on to every process it starts, and the tests that press Ctrl-C on one would
    # wait in vain: the suite's processes take SIGINT as a terminal gives it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


ONE_AT_A_TIME = pytest.mark.xdist_group("model-and-editors")
"""Where tests run in parallel, the tests of the real model and the real editors run one after another."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        if any(item.path == area or area in item.path.parents for area in SLOW_AREAS):
            item.add_marker(slow)
        if item.get_closest_marker("model") or item.get_closest_marker("editor"):
            item.add_marker(ONE_AT_A_TIME)


@pytest.fixture(scope="session", autouse=True)
def _shared_model_servers_end_with_the_session() -> Iterator[None]:
    """The embedded model's server outlives the process that starts it (it is shared by the user's
    pycapsule processes, docs/model.md): every test runs with a runtime folder of the session's, never the
    user's, and whatever server was started there is stopped when the session ends (tests/models gives
    each test a folder of its own)."""
    from tests.models.servers import stop_model_servers

    folder = Path(tempfile.mkdtemp(prefix="pcrt-session-"))
    previous = os.environ.get("PYCAPSULE_RUNTIME_DIR")
    os.environ["PYCAPSULE_RUNTIME_DIR"] = str(folder)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("PYCAPSULE_RUNTIME_DIR", None)
        else:
            os.environ["PYCAPSULE_RUNTIME_DIR"] = previous
        stop_model_servers(folder)
        shutil.rmtree(folder, ignore_errors=True)
