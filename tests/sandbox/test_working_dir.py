"""Where a job runs: as under pytest started from the project root, a doctest finds the project's files by
relative paths and may write files at the top; unlike under pytest, what it writes stays in the sandbox, and
the project's folders stay read-only."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox
from pycapsule.sandbox.worker.working_dir import COPY_MAX_BYTES

from .conftest import CONTAINED, EVERY_BACKEND, run

READS_BY_RELATIVE_PATH = '''
def first_line(path):
    """
    >>> first_line("data/numbers.txt")
    'one'
    >>> import os; os.path.isdir("data") and os.path.isfile("pyproject.toml")
    True
    """
    with open(path) as handle:
        return handle.readline().strip()
'''

WRITES_AT_THE_TOP = '''
def save(path, text):
    """
    >>> save("notes.txt", "kept")
    >>> open("notes.txt").read()
    'kept'
    """
    with open(path, "w") as handle:
        handle.write(text)
'''

WRITES_INTO_THE_PROJECT = '''
def save(path, text):
    """
    >>> save("data/notes.txt", "kept")
    """
    with open(path, "w") as handle:
        handle.write(text)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "reader"\n')
    (tmp_path / "data").mkdir(mode=0o755)
    (tmp_path / "data" / "numbers.txt").write_text("one\ntwo\n")
    return tmp_path


def pytest_passes(project: Path, source: str) -> bool:
    (project / "example.py").write_text(source)
    try:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules",
                   "example.py"]
        return subprocess.run(command, cwd=project, capture_output=True).returncode == 0
    finally:
        (project / "example.py").unlink()


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_a_doctest_reads_project_files_by_relative_path_as_under_pytest(
        sandbox: Sandbox, project: Path) -> None:
    assert pytest_passes(project, READS_BY_RELATIVE_PATH), "the reference: pytest from the project root"
    result = run(sandbox, READS_BY_RELATIVE_PATH, project_root=project)
    assert result.passed, result.functions


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_a_file_written_at_the_top_is_the_jobs_own_and_gone_after_it(sandbox: Sandbox, project: Path) -> None:
    result = run(sandbox, WRITES_AT_THE_TOP, project_root=project)
    assert result.passed, result.functions
    assert not (project / "notes.txt").exists()
    after = run(sandbox, 'import os\nprint(os.path.exists("notes.txt"))', project_root=project)
    assert after.stdout == "False\n"


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_a_top_level_file_an_earlier_run_left_in_the_project_is_written_over_in_the_sandbox_only(
        sandbox: Sandbox, project: Path) -> None:
    (project / "notes.txt").write_text("left by pytest")
    result = run(sandbox, WRITES_AT_THE_TOP, project_root=project)
    assert result.passed, result.functions
    assert (project / "notes.txt").read_text() == "left by pytest"


@pytest.mark.parametrize("sandbox", CONTAINED, indirect=True)
def test_writing_into_a_project_folder_fails_as_read_only(sandbox: Sandbox, project: Path) -> None:
    result = run(sandbox, WRITES_INTO_THE_PROJECT, project_root=project)
    [failure] = result.functions[0].failures
    assert failure.exception is not None and failure.exception.missing is not None
    assert failure.exception.missing.kind == "read-only"
    assert "data/notes.txt" in failure.exception.missing.detail
    assert not (project / "data" / "notes.txt").exists()


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_a_scratch_module_named_like_a_project_file_does_not_write_through_to_it(
        sandbox: Sandbox, project: Path) -> None:
    big = "PROJECT = True\n" + "#" * (COPY_MAX_BYTES + 1) + "\n"  # too big to copy: it is linked
    (project / "capsule.py").write_text(big)
    result = run(sandbox, READS_BY_RELATIVE_PATH, project_root=project, filename="capsule.py")
    assert result.passed, result.functions
    assert (project / "capsule.py").read_text() == big


@pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)
def test_every_project_entry_is_there_also_after_the_worker_warmed_the_next_job_up(
        sandbox: Sandbox, project: Path) -> None:
    (project / "warm_up.py").write_text("X = 1\n")  # the name of the worker's own warm-up module
    shows = 'print(open("warm_up.py").read())'
    for _ in range(3):
        assert run(sandbox, shows, project_root=project).stdout == "X = 1\n\n"
        time.sleep(0.2)  # a pause: the next job's process warms up before its job comes
