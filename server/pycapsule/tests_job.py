"""The project's selected tests, run by pytest in the sandbox against a candidate module not on disk.

The job's program installs an import hook that serves the candidate's text for the target module (under
its real name and path, so the tests import it as they always do), then runs pytest on the selected node
ids with the project's own configuration (its conftests, plugins and import mode; `addopts` are dropped
but for `-p` and `--import-mode`: coverage, xdist or a report file would not work in a read-only sandbox).
Its terminal output is discarded; what the host reads is one report line on stdout, marked with a token
made for that run: a line a test or the candidate prints that does not carry it is not a report, and a
second line that does (the code under test found the token) makes the run no report at all.
"""

from __future__ import annotations

import ast
import json
import secrets
import shlex
import threading
from dataclasses import dataclass

from pycapsule.parsing import parse_source
from pycapsule.project import ModuleImport, pytest_config
from pycapsule.project_tests import TestSelection
from pycapsule.sandbox.api import Job, RunResult, Sandbox

REPORT_MARK = "pycapsule-tests-report: "
MAX_FAILURES = 5
"""Failures the report keeps in full (the rest are counted)."""
FAILURE_CHARS = 3000
WEAK = 0.5
"""Tests that run less than this share of a body's lines verify it weakly."""
UNUSABLE_PLUGINS = ("xdist", "cov", "pytest_cov")
"""Plugins a project's `addopts` may load that cannot work in the sandbox (worker processes, report files)."""

_DRIVER = '''\
import contextlib, importlib.util, io, json, linecache, os, sys, threading

NAME, REL, PACKAGE, SOURCE, TESTS, ARGS = {name!r}, {rel!r}, {package!r}, {source!r}, {tests!r}, {args!r}
MAX_FAILURES, FAILURE_CHARS, MARK = {max_failures!r}, {failure_chars!r}, {mark!r}
ROOT = next((os.path.normpath(p) for p in sys.path if os.path.isfile(os.path.join(p, REL))), None)
# Bound before any test runs: code under test that replaces json.dumps or sys.stdout does not reach these.
ENCODE, WRITE, OUT = json.JSONEncoder().encode, os.write, os.dup(1)


def report(found):
    data = (MARK + ENCODE(found) + "\\n").encode()
    while data:
        data = data[WRITE(OUT, data):]


class Candidate:
    """Serves the candidate's text for the target module; every other module imports from disk."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != NAME:
            return None
        where = [os.path.dirname(PATH)] if PACKAGE else None
        return importlib.util.spec_from_file_location(fullname, PATH, loader=self,
                                                      submodule_search_locations=where)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(SOURCE, PATH, "exec", dont_inherit=True), module.__dict__)

    def get_source(self, fullname):
        return SOURCE


class Outcomes:
    def __init__(self):
        self.passed, self.skipped, self.failed, self.failures, self.ids = 0, 0, 0, [], []

    def failure(self, nodeid, when, report):
        self.failed += 1
        if len(self.ids) < 1000:
            self.ids.append([nodeid, when])
        if len(self.failures) < MAX_FAILURES:
            found = getattr(report.longrepr, "reprcrash", None)
            text = report.longreprtext.replace(ROOT.rstrip("/") + "/", "")
            self.failures.append({{"test": nodeid, "when": when, "text": text[-FAILURE_CHARS:],
                                  "crash": found.message[:FAILURE_CHARS] if found is not None else ""}})

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failure(report.nodeid, report.when, report)
        elif report.skipped and report.when != "teardown":
            self.skipped += 1
        elif report.passed and report.when == "call":
            self.passed += 1

    def pytest_collectreport(self, report):
        if report.failed:
            self.failure(report.nodeid or "collecting", "collect", report)


if ROOT is None:
    report({{"error": "the project is not visible in the sandbox"}})
    raise SystemExit(0)
PATH = os.path.join(ROOT, REL)
try:
    import pytest
except ImportError as exc:
    report({{"error": "no-pytest", "detail": str(exc)}})
    raise SystemExit(0)
LINES = set()


def in_module(frame, event, arg):
    """The lines the candidate module runs (other files' frames are not traced at all)."""
    if frame.f_code.co_filename != PATH:
        return None
    if event == "line":
        LINES.add(frame.f_lineno)
    return in_module


linecache.cache[PATH] = (len(SOURCE), None, SOURCE.splitlines(True), PATH)
sys.meta_path.insert(0, Candidate())
sys.modules.pop(NAME, None)
outcomes = Outcomes()
threading.settrace(in_module)
sys.settrace(in_module)
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = pytest.main([*(os.path.join(ROOT, test) for test in TESTS), "-p", "no:cacheprovider", "-q",
                        "--tb=short", "--rootdir", ROOT, "-o", "addopts=", *ARGS], plugins=[outcomes])
sys.settrace(None)
report({{"exit": int(code), "passed": outcomes.passed, "failed": outcomes.failed, "skipped": outcomes.skipped,
        "failures": outcomes.failures, "failed_ids": outcomes.ids, "lines": sorted(LINES)}})
'''


@dataclass(frozen=True)
class TestFailure:
    __test__ = False

    test: str
    """The node id, e.g. 'tests/test_x.py::test_f[2-3]'."""
    when: str
    """'setup', 'call', 'teardown' or 'collect'."""
    text: str
    """pytest's short traceback: the test's line, the user-code frames, the values its assert shows."""
    crash: str
    """The failure's one-line message ('assert 3 == 4')."""


@dataclass(frozen=True)
class TestsRun:
    """What one run of the selected tests found; `problem` is set when they could not run."""

    __test__ = False

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: tuple[TestFailure, ...] = ()
    """The first few failures in full."""
    failed_ids: tuple[tuple[str, str], ...] = ()
    """Every failure's node id and phase ('collect' for a file that failed to import)."""
    problem: str | None = None
    """One sentence: pytest is missing, the run timed out, the job did not report."""
    lines_run: frozenset[int] = frozenset()
    """Lines of the candidate module the tests ran."""

    @property
    def ok(self) -> bool:
        return self.problem is None and self.failed == 0 and self.passed > 0

    def failing(self, phases: tuple[str, ...] = ("setup", "call", "teardown", "collect")) -> set[str]:
        """The node ids that failed in one of `phases` (a file's id when it failed to be collected)."""
        return {test for test, when in self.failed_ids if when in phases}


def _kept_addopts(words: tuple[str, ...]) -> list[str]:
    """Of a project's `addopts`, what changes how its tests import and which plugins load."""
    kept: list[str] = []
    words = tuple(part for word in words for part in shlex.split(word))
    for index, word in enumerate(words):
        if word.startswith("--import-mode="):
            kept.append(word)
        elif word in ("-p", "--import-mode") and index + 1 < len(words) and (
                word == "--import-mode" or words[index + 1].split(":")[-1] not in UNUSABLE_PLUGINS):
            kept += [word, words[index + 1]]
    return kept


def tests_job(found: ModuleImport, candidate: str, selection: TestSelection, timeout: float,
              mark: str = REPORT_MARK) -> Job:
    """A job running `selection` with pytest against `candidate`, the module at `found` with a new body;
    its report line starts with `mark`."""
    config = pytest_config(found.path.parent, found.root)
    args = _kept_addopts(config.addopts if config else ())
    program = _DRIVER.format(
        name=found.name, rel=found.path.relative_to(found.root).as_posix(), package=found.is_package,
        source=candidate, tests=list(selection.node_ids), args=args,
        max_failures=MAX_FAILURES, failure_chars=FAILURE_CHARS, mark=mark)
    return Job(source=program, filename="project_tests.py", doctest_targets=(), timeout=timeout,
               output_limit=64 * 1024, project_root=found.root, import_paths=found.import_paths)


def read_tests_run(result: RunResult, interpreter: str, selection: TestSelection,
                   mark: str = REPORT_MARK) -> TestsRun:
    """The report line the job printed (the one line starting with `mark`), or why there is none."""
    files = ", ".join(selection.files)
    if result.status == "timeout":
        return TestsRun(problem=f"the project's tests ({files}) did not finish within the time allowed "
                                "(the `test_timeout` setting)")
    if result.status == "cancelled":
        return TestsRun(problem="cancelled")
    if result.status != "ok":  # the program ended before its own end: whatever it printed is not a report
        why = result.detail or (result.module_error.message if result.module_error else result.status)
        return TestsRun(problem=f"the project's tests ({files}) ended early: {' '.join(str(why).split())}")
    reports = [line[len(mark):] for line in result.stdout.splitlines() if line.startswith(mark)]
    if len(reports) > 1:
        return TestsRun(problem=f"the project's tests ({files}) gave no report: the code under test wrote "
                                "into the report channel")
    try:
        found = json.loads(reports[0]) if reports else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        why = result.detail or (result.module_error.message if result.module_error else result.status)
        return TestsRun(problem=f"the project's tests ({files}) could not be run: "
                                f"{' '.join(str(why).split())}")
    if found.get("error") == "no-pytest":
        return TestsRun(problem=f"pytest is not installed for {interpreter}, so the project's tests "
                                f"({files}) were not run")
    if "error" in found:
        return TestsRun(problem=f"the project's tests could not be run: {found['error']}")
    failures = tuple(TestFailure(*(str(f.get(key, "")) for key in ("test", "when", "text", "crash")))
                     for f in found.get("failures", []) if isinstance(f, dict))
    counts = (int(found.get(key, 0)) for key in ("passed", "failed", "skipped"))
    ids = tuple((str(pair[0]), str(pair[1])) for pair in found.get("failed_ids", [])
                if isinstance(pair, list) and len(pair) == 2)
    lines = frozenset(n for n in found.get("lines", []) if isinstance(n, int))
    return TestsRun(*counts, failures=failures, failed_ids=ids, lines_run=lines)


def tests_headline(run: TestsRun) -> str:
    """One line: how many of the project's tests failed, and the first one's message."""
    if run.problem is not None:
        return run.problem
    first = run.failures[0] if run.failures else None
    where = f": {first.test}: {' '.join(first.crash.split())[:200]}" if first else ""
    return f"{run.failed} of {counted(run.passed + run.failed, 'project test')} failed{where}"


def tests_condensed(run: TestsRun, max_lines: int = 30) -> str:
    """The few lines the model gets: each failing test's id and pytest's short traceback (the assert line,
    the values it shows, the user-code frames), at most `max_lines` in all."""
    if run.problem is not None:
        return run.problem
    lines = [f"{run.failed} of the {counted(run.passed + run.failed, 'test')} of this function in the "
             "project failed (the tests are right; change only the function):"]
    for failure in run.failures:
        lines.append(f"{failure.test} ({failure.when}):")
        lines += ["  " + line for line in failure.text.strip().splitlines()]
        if len(lines) >= max_lines:
            break
    return "\n".join(lines[:max_lines])


@dataclass(frozen=True)
class ProjectTests:
    """The tests that guard one capsule, ready to run against candidates."""

    found: ModuleImport
    selection: TestSelection
    interpreter: str
    timeout: float
    already_failing: tuple[str, ...] = ()
    """Selected tests that fail on the original file: reported, left out, never charged to the model."""

    def run(self, sandbox: Sandbox, candidate: str,
            cancel: threading.Event | None = None) -> tuple[TestsRun, RunResult]:
        """The tests run against `candidate` in `sandbox`: what they found, and the job's own result."""
        mark = f"{REPORT_MARK.rstrip(': ')}-{secrets.token_hex(12)}: "
        result = sandbox.run(tests_job(self.found, candidate, self.selection, self.timeout, mark), cancel)
        return read_tests_run(result, self.interpreter, self.selection, mark), result

    def describe(self, run: TestsRun, coverage: Coverage) -> str:
        """'12 tests (tests/test_lists.py; 7 of 9 body lines run)'."""
        where = ", ".join(self.selection.files)
        if coverage.lines:
            where += f"; {coverage.ran} of {counted(coverage.lines, 'body line')} run"
        return f"{counted(run.passed, 'test')} ({where})"


@dataclass(frozen=True)
class Coverage:
    """How many of a body's statement lines a run of the tests executed."""

    ran: int
    lines: int

    @property
    def weak(self) -> bool:
        """The tests ran less than WEAK of the body's lines."""
        return bool(self.lines) and self.ran < WEAK * self.lines


def coverage(lines_run: frozenset[int], candidate: str, qualname: str) -> Coverage:
    """How many of the body's lines of `qualname` in `candidate` are among `lines_run`."""
    body = body_lines(candidate, qualname)
    return Coverage(len(body & lines_run), len(body))


def body_lines(source: str, qualname: str) -> frozenset[int]:
    """The lines of the statements in the body of the function `qualname` of `source` (its docstring and
    the bodies of functions defined inside it left out): what a test run can cover."""
    try:
        node: ast.AST = parse_source(source)
    except (SyntaxError, ValueError):
        return frozenset()
    for name in qualname.split("."):
        found = [child for child in getattr(node, "body", ()) if getattr(child, "name", None) == name]
        if not found:
            return frozenset()
        node = found[0]
    body = list(getattr(node, "body", ()))
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    lines: set[int] = set()
    pending = list(body)
    while pending:
        statement = pending.pop()
        lines.add(statement.lineno)
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            pending += [child for child in ast.iter_child_nodes(statement)
                        if isinstance(child, ast.stmt | ast.excepthandler)]
    return frozenset(lines)


def counted(number: int, word: str) -> str:
    """'1 test', '12 tests'."""
    return f"{number} {word}" if number == 1 else f"{number} {word}s"
