"""`pycapsule check` on folders, several paths and the whole project, as pytest and ruff take them: which
files it checks (virtual environments, hidden and build folders left out), what each function ends as
(passed, failed, not verified, stub), the summary line, the exit code, and the one `--json` document with an
entry per file. Real files in temporary projects, the real CLI in a subprocess, the default sandbox."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from pycapsule.__main__ import main
from pycapsule.commands.output import COMMAND_FIELDS

from tests.projects.builders import write_tree
from tests.projects.cli import pycapsule

PASSING = '''
    def double(x):
        """
        >>> double(2)
        4
        """
        return 2 * x
'''
FAILING = '''
    def half(x):
        """
        >>> half(4)
        2
        """
        return x / 2
'''
STUB = '''
    def area(r):
        """The area of a square of side r.

        >>> area(3)
        9
        """
        ...
'''
ENVELOPE = {"command", "ok", "exit_code", "error"}
FILE_FIELDS = {"path", "qualname", "error", "passed", "status", "functions", "module_error", "stdout",
               "stderr", "output_truncated", "duration", "detail", "warnings", "tests"}


def check(*args: str, home: Path, cwd: Path) -> tuple[int, str]:
    done = pycapsule("check", *args, home=home, cwd=cwd)
    return done.returncode, done.stdout


def check_json(*args: str, home: Path, cwd: Path) -> tuple[int, dict[str, Any]]:
    done = pycapsule("check", *args, "--json", home=home, cwd=cwd)
    document = json.loads(done.stdout)  # exactly one document
    assert set(document) == ENVELOPE | set(COMMAND_FIELDS["check"])
    assert document["exit_code"] == done.returncode and document["ok"] is (done.returncode == 0)
    for entry in document["files"]:
        assert set(entry) == FILE_FIELDS
    return done.returncode, document


def checked(document: dict[str, Any]) -> dict[str, dict[str, str]]:
    """path -> {qualname -> verdict}, for every file the run checked."""
    return {entry["path"]: {f["qualname"]: f["verdict"] for f in entry["functions"]}
            for entry in document["files"]}


def test_a_folder_checks_each_module_and_ends_with_the_summary(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"good.py": PASSING, "bad.py": FAILING})
    code, out = check(".", home=tmp_path, cwd=project)
    assert code == 1
    assert "FAIL  bad.py::half: 1 of 1 examples failed" in out
    assert "bad.py:3: >>> half(4)" in out
    assert "good.py" not in out  # over several files, only what did not pass is listed
    assert out.splitlines()[-1] == "1 passed, 1 failed, 0 not verified, 0 stubs in 2 files"


def test_a_nested_package_is_walked_and_imported_as_its_package(tmp_path: Path, project: Path) -> None:
    write_tree(project, {
        "pyproject.toml": '[project]\nname = "shop"\n',
        "shop/__init__.py": "",
        "shop/money.py": "CENTS = 100\n",
        "shop/tax/__init__.py": "",
        "shop/tax/rates.py": '''
            from ..money import CENTS


            def in_cents(amount):
                """
                >>> in_cents(2)
                200
                """
                return amount * CENTS
        ''',
    })
    code, document = check_json("shop", home=tmp_path, cwd=project)
    assert checked(document) == {"shop/tax/rates.py": {"in_cents": "passed"}}
    assert (code, document["summary"]["passed"]) == (0, 1)


def test_virtual_environments_hidden_and_build_folders_are_not_entered(tmp_path: Path, project: Path) -> None:
    skipped = ["site-packages/lib.py", "build/lib/bad.py", "dist/bad.py", "node_modules/x/bad.py",
               "__pycache__/bad.py", ".git/hooks/bad.py", ".tox/py311/bad.py", "venv/lib/bad.py",
               "setup.py", "__main__.py"]
    write_tree(project, {"good.py": PASSING, ".venv/pyvenv.cfg": "home = /usr/bin\n",
                         ".venv/lib/python3.11/site-packages/pkg/bad.py": FAILING,
                         "myenv/pyvenv.cfg": "home = /usr/bin\n", "myenv/lib/bad.py": FAILING,
                         **dict.fromkeys(skipped, FAILING)})
    code, document = check_json(home=tmp_path, cwd=project)
    assert checked(document) == {"good.py": {"double": "passed"}}
    assert code == 0
    # named, a hidden folder is checked as it is
    code, document = check_json(".tox", home=tmp_path, cwd=project)
    assert list(checked(document)) == [".tox/py311/bad.py"] and code == 1


def test_a_stub_is_counted_as_a_stub_and_does_not_fail_the_run(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"shapes.py": STUB + PASSING})
    code, out = check("shapes.py", home=tmp_path, cwd=project)
    assert code == 0
    assert "STUB  area (1 examples; no body yet: pycapsule generate shapes.py::area writes one)" in out
    assert "expected" not in out  # a stub's examples cannot pass: no failure is shown for them
    assert out.splitlines()[-1] == "1 passed, 0 failed, 0 not verified, 1 stub"
    code, document = check_json("shapes.py", home=tmp_path, cwd=project)
    assert checked(document) == {"shapes.py": {"area": "stub", "double": "passed"}}
    assert document["summary"]["stubs"] == 1 and code == 0


def test_several_paths_are_checked_in_order_each_file_once(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"a/one.py": PASSING, "a/two.py": FAILING,
                         "b/three.py": PASSING.replace("double", "twice")})
    code, document = check_json("b/three.py", "a", "a/two.py", "b/three.py::twice",
                                home=tmp_path, cwd=project)
    assert list(checked(document)) == ["b/three.py", "a/one.py", "a/two.py"]
    assert document["paths"] == ["b/three.py", "a", "a/two.py", "b/three.py::twice"]
    assert document["summary"] == {"passed": 2, "passed_loosely": 0, "failed": 1, "not_verified": 0,
                                   "stubs": 0, "files": 3, "files_not_checked": 0}
    assert document["path"] is None and document["functions"] == []  # per file, in `files`
    assert code == 1


def test_no_path_checks_the_project_around_the_current_folder(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"pyproject.toml": '[project]\nname = "demo"\n', "top.py": PASSING,
                         "src/demo/__init__.py": "", "src/demo/deep/__init__.py": "",
                         "src/demo/deep/inner.py": STUB})
    code, document = check_json(home=tmp_path, cwd=project / "src" / "demo")
    assert document["paths"] == ["../.."]
    assert checked(document) == {"../../top.py": {"double": "passed"},
                                 "../../src/demo/deep/inner.py": {"area": "stub"}}
    assert code == 0
    code, out = check(home=tmp_path, cwd=project / "src" / "demo")
    assert out.splitlines()[-1] == "1 passed, 0 failed, 0 not verified, 1 stub in 2 files"


def test_no_path_outside_a_project_checks_the_current_folder(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"here/good.py": PASSING, "elsewhere/bad.py": FAILING})
    code, document = check_json(home=tmp_path, cwd=project / "here")
    assert (document["paths"], list(checked(document)), code) == (["."], ["good.py"], 0)


@pytest.mark.parametrize(("arguments", "message"), [
    (["good.py", "nope"], "nope is not a file or folder"),
    (["good.py", "gone.py::f"], "gone.py is not a file or folder"),
    (["good.py::nope"], "there is no function named 'nope' in"),
    ([".::double"], ". is a folder; name a function in one of its files"),
])
def test_a_path_that_does_not_exist_is_a_usage_error_before_anything_runs(
        tmp_path: Path, project: Path, arguments: list[str], message: str) -> None:
    write_tree(project, {"good.py": PASSING})
    done = pycapsule("check", *arguments, home=tmp_path, cwd=project)
    assert (done.returncode, done.stdout) == (2, "")
    assert message in done.stderr
    code, document = check_json(*arguments, home=tmp_path, cwd=project)
    assert code == 2 and document["error"]["kind"] == "usage" and message in document["error"]["message"]
    assert document["files"] == [] and document["paths"] == arguments


def test_json_is_one_document_with_an_entry_per_file(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"good.py": PASSING, "pkg/__init__.py": "", "pkg/bad.py": FAILING + STUB})
    code, document = check_json(".", home=tmp_path, cwd=project)
    assert (code, document["error"], document["backend"]) == (1, None, "bwrap")
    assert checked(document) == {"good.py": {"double": "passed"},
                                 "pkg/bad.py": {"half": "failed", "area": "stub"}}
    bad = document["files"][1]
    assert (bad["status"], bad["passed"], bad["qualname"], bad["error"]) == ("ok", False, None, None)
    [failure] = bad["functions"][0]["failures"]
    assert (failure["source"], failure["expected"], failure["got"]) == ("half(4)", "2\n", "2.0\n")
    assert document["summary"] == {"passed": 1, "passed_loosely": 0, "failed": 1, "not_verified": 0,
                                   "stubs": 1, "files": 2, "files_not_checked": 0}
    assert document["passed"] is False and document["duration"] > 0


def test_a_one_file_run_keeps_its_fields_and_has_its_entry_too(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"good.py": PASSING})
    code, document = check_json("good.py", home=tmp_path, cwd=project)
    [entry] = document["files"]
    assert code == 0 and document["path"] == "good.py" and document["status"] == "ok"
    assert document["functions"] == entry["functions"]
    assert [(f["qualname"], f["attempted"], f["verdict"]) for f in document["functions"]] == [
        ("double", 1, "passed")]


THREE_FAILURES = '''
    def inc(x):
        """
        >>> inc(1)
        2
        >>> inc(2)
        3
        >>> inc(3)
        4
        """
        return x
'''


def test_one_failure_per_function_and_the_others_folded(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"inc.py": THREE_FAILURES})
    code, out = check("inc.py", home=tmp_path, cwd=project)
    assert code == 1
    assert "FAIL  inc: 3 of 3 examples failed" in out
    assert ">>> inc(1)" in out and ">>> inc(2)" not in out
    assert "  and 2 more examples of inc failed" in out
    _, named = check("inc.py::inc", home=tmp_path, cwd=project)  # the one function named: every failure
    assert ">>> inc(3)" in named and "more examples" not in named


def test_an_example_that_needs_the_network_is_not_verified_and_does_not_fail_the_run(
        tmp_path: Path, project: Path) -> None:
    write_tree(project, {"fetch.py": '''
        import urllib.request


        def fetch():
            """
            >>> fetch()
            b''
            """
            return urllib.request.urlopen("http://pycapsule-test.invalid/", timeout=5).read()
    ''', "skipped.py": '''
        def later():
            """
            >>> later()  # doctest: +SKIP
            1
            """
            return 1
    '''})
    code, out = check(".", home=tmp_path, cwd=project)
    assert "SKIP  fetch.py::fetch: 1 of 1 examples cannot run in the sandbox (not verified)" in out
    assert "note: the sandbox has no network" in out
    assert "SKIP  skipped.py::later (1 examples skipped: nothing verified)" in out
    assert out.splitlines()[-1] == "0 passed, 0 failed, 2 not verified, 0 stubs in 2 files"
    assert code == 0


def test_a_file_that_cannot_be_checked_is_said_and_the_others_still_run(tmp_path: Path,
                                                                        project: Path) -> None:
    write_tree(project, {"broken.py": 'def f(:\n    """\n    >>> f()\n    """\n', "good.py": PASSING,
                         "no_examples.py": "raise SystemExit('imported, though it has no example')\n",
                         "no_examples_broken.py": "def g(:\n"})
    code, out = check(".", home=tmp_path, cwd=project)
    assert "broken.py:1:7: syntax error" in out
    assert "no_examples" not in out  # a file with no example is neither imported nor parsed
    assert out.splitlines()[-1] == ("1 passed, 0 failed, 0 not verified, 0 stubs in 2 files; "
                                    "1 file could not be checked")
    assert code == 1
    _, document = check_json(".", home=tmp_path, cwd=project)
    assert document["files"][0]["error"] == {"kind": "syntax", "line": 1,
                                             "message": "broken.py:1:7: syntax error: invalid syntax"}


def test_a_class_or_a_function_without_examples_can_be_named(tmp_path: Path, project: Path) -> None:
    write_tree(project, {"shapes.py": '''
        class Square:
            """
            >>> Square().side
            1
            """
            side = 1


        def helper():
            return 1
    '''})
    code, out = check("shapes.py::Square", home=tmp_path, cwd=project)
    assert (code, out.splitlines()) == (0, ["PASS  Square (1 examples)",
                                            "1 passed, 0 failed, 0 not verified, 0 stubs"])
    code, out = check("shapes.py::helper", home=tmp_path, cwd=project)  # named, though it has no example
    assert (code, out.splitlines()) == (0, ["SKIP  helper (no examples: nothing verified)",
                                            "0 passed, 0 failed, 1 not verified, 0 stubs"])


def test_every_file_runs_in_one_warm_sandbox(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch,
                                              ) -> None:
    from pycapsule.sandbox import select

    write_tree(project, {"one/pyproject.toml": "", "one/a.py": PASSING, "one/pkg/__init__.py": "",
                         "one/pkg/b.py": PASSING, "two/pyproject.toml": "", "two/c.py": PASSING})
    opened = []
    real = select.open_sandbox

    def counting(*args: Any, **kwargs: Any) -> Any:
        opened.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(select, "open_sandbox", counting)
    monkeypatch.chdir(project)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", "one", "two", "--json"])
    document = json.loads(out.getvalue())
    assert (code, document["summary"]["passed"], document["summary"]["files"]) == (0, 3, 3)
    assert len(opened) == 1, opened  # two projects, three files: one sandbox
