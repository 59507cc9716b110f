"""`pycapsule check` as a user runs it: a real process, real files, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

MODULE = '''import helpers


def double(x):
    """
    >>> double(2)
    4
    >>> helpers.triple(1)
    3
    """
    return 2 * x


def half(x):
    """
    >>> half(4)
    2
    """
    return x / 2
'''

HALF_LINE = MODULE.splitlines().index("    >>> half(4)") + 1


def check(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", "check", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "PYTHONWARNINGS": "ignore"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    (tmp_path / "helpers.py").write_text("def triple(x):\n    return 3 * x\n")
    (tmp_path / "mod.py").write_text(MODULE)
    return tmp_path


def test_a_passing_function_exits_0(project: Path) -> None:
    done = check(f"{project / 'mod.py'}::double", "--backend", "bwrap")
    assert done.returncode == 0, done.stderr
    assert "PASS  double (2 examples)" in done.stdout


def test_a_failing_example_exits_1_with_its_line_expected_and_got(project: Path) -> None:
    done = check(str(project / "mod.py"), "--backend", "bwrap")
    assert done.returncode == 1
    assert f"{project / 'mod.py'}:{HALF_LINE}: >>> half(4)" in done.stdout
    assert "expected:\n      2\n    got:\n      2.0" in done.stdout
    assert "PASS  double" in done.stdout


def test_json_output_has_the_run_result(project: Path) -> None:
    done = check(f"{project / 'mod.py'}::half", "--backend", "bwrap", "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 1
    assert data["backend"] == "bwrap" and data["passed"] is False
    failure = data["functions"][0]["failures"][0]
    assert (failure["line"], failure["expected"], failure["got"]) == (HALF_LINE, "2\n", "2.0\n")


def test_top_level_code_runs_in_the_sandbox_not_in_the_caller(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "written-by-module"
    (project / "writer.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    done = check(str(project / "writer.py"), "--backend", "bwrap")
    assert not marker.exists()
    assert done.returncode == 1
    assert "the module raised" in done.stdout


def test_a_syntax_error_is_reported_with_its_line(project: Path) -> None:
    (project / "broken.py").write_text("def ok():\n    pass\n\ndef broken(:\n    pass\n")
    done = check(str(project / "broken.py"), "--backend", "bwrap")
    assert done.returncode == 1
    assert done.stdout.startswith(f"{project / 'broken.py'}:4:")
    assert "syntax error" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["/nonexistent/mod.py"], "is not a file"),
        (["{project}/mod.py::nope"], "there is no function named 'nope' in"),
        (["{project}/mod.py", "--backend", "podman"], "no sandbox backend named 'podman'"),
    ],
)
def test_usage_errors_exit_2_with_one_sentence(project: Path, arguments: list[str], message: str) -> None:
    done = check(*(a.format(project=project) for a in arguments))
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    # one sentence; a bad option value is said the way argparse says it, under the usage (wrapped or not)
    *usage, _ = done.stderr.strip().splitlines()
    assert not usage or (usage[0].startswith("usage: pycapsule check")
                         and all(line.startswith(" ") for line in usage[1:]))


def test_unsafe_subprocess_warns_on_every_run(project: Path) -> None:
    done = check(f"{project / 'mod.py'}::double", "--backend", "unsafe-subprocess")
    assert done.returncode == 0
    assert "does not protect the file system" in done.stderr


def test_the_module_is_imported_under_its_name_so_a_main_block_does_not_run(project: Path) -> None:
    (project / "script.py").write_text(
        'def f():\n    """\n    >>> f()\n    1\n    """\n    return 1\n\n'
        'if __name__ == "__main__":\n    raise SystemExit("the main block ran")\n'
    )
    done = check(str(project / "script.py"), "--backend", "bwrap")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  f (1 examples)" in done.stdout


READS_A_SECRET = '''
def peek():
    """
    >>> peek()
    'nothing'
    """
    try:
        return open({secret!r}).read()
    except OSError:
        return 'nothing'
'''


def test_a_cloned_projects_file_cannot_switch_the_sandbox_off(project: Path, tmp_path_factory) -> None:
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    secret.write_text("HOST-SECRET")
    (project / "pyproject.toml").write_text('[tool.pycapsule]\nsandbox = "unsafe-subprocess"\n')
    (project / "peek.py").write_text(READS_A_SECRET.format(secret=str(secret)))
    done = check(str(project / "peek.py"))
    assert done.returncode == 0, done.stdout + done.stderr  # it ran sandboxed: the secret stayed out
    assert "HOST-SECRET" not in done.stdout
    assert "does not protect the file system" not in done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "'sandbox'" in line]
    assert str(project / "pyproject.toml") in warning and "ignored" in warning


def test_a_loose_file_in_home_cannot_read_home() -> None:
    # A home anyone may read (as many are): only the root policy keeps it out, not its permissions.
    home = Path(tempfile.mkdtemp(prefix="pycapsule-home-", dir="/var/tmp"))
    home.chmod(0o755)
    (home / ".aws").mkdir()
    canary = home / ".aws" / "credentials"
    canary.write_text("HOME-SECRET")
    loose = home / "loose.py"
    loose.write_text(READS_A_SECRET.format(secret=str(canary)))
    try:
        done = subprocess.run([sys.executable, "-m", "pycapsule", "check", str(loose), "--backend", "bwrap"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "HOME": str(home)})
    finally:
        shutil.rmtree(home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "HOME-SECRET" not in done.stdout


def test_an_example_that_needs_the_network_or_a_missing_file_fails_with_a_note_that_says_so(
        project: Path) -> None:
    (project / "io_mod.py").write_text('''import urllib.request


def fetch():
    """
    >>> fetch()
    b''
    """
    return urllib.request.urlopen("http://pycapsule-test.invalid/", timeout=5).read()


def load():
    """
    >>> load()
    ''
    """
    return open("data/missing.csv").read()
''')
    done = check(str(project / "io_mod.py"), "--backend", "bwrap")
    assert done.returncode == 1, "they still fail, as under pytest here"
    assert "note: the sandbox has no network, so this example cannot pass here" in done.stdout
    assert "note: a file or folder it needs is not in the sandbox" in done.stdout
    assert done.stdout.count("note:") == 2


def test_a_src_layout_package_reads_project_files_by_relative_path_as_pytest_does(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "reader"\n')
    (tmp_path / "data").mkdir(mode=0o755)
    (tmp_path / "data" / "numbers.txt").write_text("1 2 3\n")
    package = tmp_path / "src" / "reader"
    package.mkdir(parents=True, mode=0o755)
    (package / "__init__.py").write_text("")
    (package / "numbers.py").write_text('''from ._parse import words


def total(path):
    """
    >>> total("data/numbers.txt")
    6
    """
    with open(path) as handle:
        return sum(map(int, words(handle.read())))
''')
    (package / "_parse.py").write_text("def words(text):\n    return text.split()\n")
    reference = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules", "src"]
    pytest_run = subprocess.run(reference, cwd=tmp_path, capture_output=True, text=True)
    assert pytest_run.returncode == 0, pytest_run.stdout
    elsewhere = tmp_path / "src"  # where the command is run from does not matter
    done = check(f"{package / 'numbers.py'}::total", "--backend", "bwrap", cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
