"""The worker that judges is out of the project's reach: it imports nothing from the project, whatever the
project's files are called (a cloned repository may ship a `ctypes.py`; an innocent one a `types.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox

from .conftest import EVERY_BACKEND, run

pytestmark = pytest.mark.parametrize("sandbox", EVERY_BACKEND, indirect=True)

WRONG = '''
def add(a, b):
    """
    >>> add(1, 2)
    3
    """
    return 0
'''

# Run wherever it is imported: every doctest checker in that process believes every example.
PATCHES_EVERY_CHECKER = '''
import sys
for name in ("doctest", "pycapsule_worker.verdicts"):
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "OutputChecker"):
        module.OutputChecker.check_output = lambda *args: True
for module in list(sys.modules.values()):
    checker = getattr(module, "Checker", None)
    if isinstance(checker, type):
        checker.check_output = lambda *args: True
'''

STDLIB_NAMES = ("ctypes", "code", "types", "signal", "select", "json", "textwrap", "tokenize", "secrets")


@pytest.fixture
def project_with_stdlib_named_modules(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shadowing"\n')
    for name in STDLIB_NAMES:
        (tmp_path / f"{name}.py").write_text(PATCHES_EVERY_CHECKER)
    return tmp_path


def test_a_project_module_named_like_the_stdlib_cannot_reach_the_judge(
        sandbox: Sandbox, project_with_stdlib_named_modules: Path) -> None:
    for _ in range(2):  # the first job in a fresh worker, then the next in the same warm one
        result = run(sandbox, WRONG, doctest_targets=("add",), project_root=project_with_stdlib_named_modules)
        assert [f.failed for f in result.functions] == [1], (result.status, result.detail, result.functions)


def test_the_project_still_comes_first_for_the_jobs_own_imports(
        sandbox: Sandbox, project_with_stdlib_named_modules: Path) -> None:
    (project_with_stdlib_named_modules / "helpers.py").write_text("ANSWER = 42\n")
    result = run(sandbox, "import helpers\nprint(helpers.ANSWER)\n",
                 project_root=project_with_stdlib_named_modules)
    assert result.stdout == "42\n", (result.status, result.detail, result.stderr)


FIRST_HALF, SECOND_HALF = "pycapsule-first-job-", "7f3a9c01e5b2d468"  # never written side by side below

LOOKS_FOR_THE_FIRST_JOB = f'''
import ctypes, gc
first, second = {FIRST_HALF!r}, {SECOND_HALF!r}
found = set()
for value in gc.get_objects():
    texts = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    for text in texts:
        at = text.find(first) if isinstance(text, str) else -1
        if at >= 0 and text[at + len(first):].startswith(second):
            found.add("an object")
head, tail = first.encode(), second.encode()
with open("/proc/self/maps") as maps:  # the job's process is not dumpable: its own memory through ctypes
    for line in maps:
        fields = line.split()
        start, end = (int(part, 16) for part in fields[0].split("-"))
        anonymous = len(fields) == 5 or fields[5] in ("[heap]", "[stack]")  # where a process keeps its data
        if not fields[1].startswith("rw") or not anonymous or end - start > 1 << 28:
            continue
        data = ctypes.string_at(start, end - start)
        at = data.find(head)
        while at >= 0:
            if data[at + len(head):at + len(head) + len(tail)] == tail:
                found.add("memory")
            at = data.find(head, at + 1)
print(sorted(found))
'''


def test_a_job_finds_nothing_of_the_job_before_it(sandbox: Sandbox, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "two_jobs"\n')
    secret = FIRST_HALF + SECOND_HALF
    first = run(sandbox, f'SECRET = "{secret}"\nprint(SECRET)\n', project_root=tmp_path)
    assert first.stdout == secret + "\n"
    second = run(sandbox, LOOKS_FOR_THE_FIRST_JOB, project_root=tmp_path, timeout=30)
    assert second.status == "ok", (second.status, second.detail, second.stderr)
    assert second.stdout == "[]\n", second.stdout


WORKER_STARTED = '''
import os
def stat(pid):
    return open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()
worker = int(stat(os.getppid())[1])  # this job's parent is the zygote; its parent, the worker
print(worker, stat(worker)[19])  # the worker's pid and start time: which worker ran this job
'''


def test_a_fresh_job_runs_in_a_worker_of_its_own_and_the_warm_one_stays(sandbox: Sandbox) -> None:
    warm = run(sandbox, WORKER_STARTED).stdout
    fresh = run(sandbox, WORKER_STARTED, fresh=True).stdout
    again = run(sandbox, WORKER_STARTED).stdout
    assert warm and fresh and warm == again != fresh
