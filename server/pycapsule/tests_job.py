"""The project's selected tests, run by pytest in the sandbox against a candidate module not on disk.

The job's program installs an import hook that serves the candidate's text for the target module (under
its real name and path, so the tests import it as they always do), then runs pytest on the selected node
ids with the project's own configuration (its conftests, plugins and import mode; `addopts` are dropped
but for `-p` and `--import-mode`: coverage, xdist or a report file would not work in a read-only sandbox).
Its terminal output is discarded; what the host reads is one report line on stdout, marked with a token
made for that run: a line a test or the candidate prints that does not carry it is not a report, and a
second line that does (the code under test found the token) makes the run no report at all.

Several candidates (a body's mutants) run in ONE job (`ProjectTests.run_many`): the program starts pytest
and loads its plugins once (a session that collects an empty folder, the target module unimportable
meanwhile), then forks a child per candidate, one at a time. The child installs that candidate, runs the
selection (stopping at the first failure) and hands its report to the parent through a pipe of its own; its
stdout, stderr and the runner's channels are closed to it. The parent waits for it within its time (killing
it and its process group when it overruns), reaps it, and writes the candidate's one report line, carrying
its index: the child's report, or why there is none (it timed out, crashed, exited early or wrote more than
one report). Nothing a candidate does in its own process reaches the next; an index with more than one line
(a child that reached the job's stdout after all) has no report.
"""

from __future__ import annotations

import ast
import json
import secrets
import shlex
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
PACE_FLOOR = 2.0
"""Seconds a candidate's run may always take, however fast the first one of its job was (`Each.pace`)."""

_DRIVER = '''\
import contextlib, gc, importlib.util, io, json, linecache, os, select, signal, sys, threading, time

NAME, REL, PACKAGE, SOURCES, TESTS, ARGS = {name!r}, {rel!r}, {package!r}, {sources!r}, {tests!r}, {args!r}
MAX_FAILURES, FAILURE_CHARS, MARK = {max_failures!r}, {failure_chars!r}, {mark!r}
FORK, STOP, EACH, PACE, START_WITHIN = {each!r}
PACE_FLOOR = {pace_floor!r}
BEGAN = time.monotonic()
ROOT = next((os.path.normpath(p) for p in sys.path if os.path.isfile(os.path.join(p, REL))), None)
# Bound before any test runs: code under test that replaces json.dumps or sys.stdout does not reach these.
ENCODE, WRITE, OUT, EXIT = json.JSONEncoder().encode, os.write, os.dup(1), os._exit
SOURCE = SOURCES[0]


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


def run_tests(extra):
    """The selection run by pytest against the candidate in SOURCE, in this process: what it found."""
    linecache.cache[PATH] = (len(SOURCE), None, SOURCE.splitlines(True), PATH)
    sys.meta_path.insert(0, Candidate())
    sys.modules.pop(NAME, None)
    outcomes = Outcomes()
    threading.settrace(in_module)
    sys.settrace(in_module)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = pytest.main([*(os.path.join(ROOT, test) for test in TESTS), "-p", "no:cacheprovider", "-q",
                            "--tb=short", "--rootdir", ROOT, "-o", "addopts=", *ARGS, *extra],
                           plugins=[outcomes])
    sys.settrace(None)
    return {{"exit": int(code), "passed": outcomes.passed, "failed": outcomes.failed,
            "skipped": outcomes.skipped, "failures": outcomes.failures, "failed_ids": outcomes.ids,
            "lines": sorted(LINES)}}


class Unserved:
    """While pytest's plugins load ahead of the candidates, the target module cannot be imported: each
    candidate's run imports its own."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == NAME:
            raise ImportError(f"{{NAME}} is imported by each candidate's own run")
        return None


class TooLong(BaseException):
    pass


def too_long(signum, frame):
    raise TooLong()


def warm_up():
    """pytest's plugins imported (and their asserts rewritten) once, here, by a session that collects an
    empty folder without conftests: each candidate's run finds them loaded. Its outcome does not matter; it
    may take what one candidate's run may."""
    empty = os.path.join(os.environ.get("TMPDIR") or "/tmp", "pycapsule-warm-up")
    guard, path = Unserved(), list(sys.path)
    sys.meta_path.insert(0, guard)
    alarm = signal.signal(signal.SIGALRM, too_long)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, EACH)
            os.makedirs(empty, exist_ok=True)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                pytest.main([empty, "--collect-only", "-p", "no:cacheprovider", "-q", "--noconftest",
                             "--rootdir", ROOT, "-o", "addopts=", *ARGS])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException:
        pass
    signal.signal(signal.SIGALRM, alarm)
    with contextlib.suppress(ValueError):
        sys.meta_path.remove(guard)
    sys.modules.pop(NAME, None)
    sys.path[:] = path


def child(index, writer):
    """In the forked child: candidate `index` installed and run, its report written to `writer`; never
    returns. Its stdout and stderr go nowhere, and it holds neither the job's report channel nor the
    runner's (a stray write cannot reach another candidate's report or the job's)."""
    global SOURCE
    code = 70
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 1)
        os.dup2(null, 2)
        for fd in {{OUT, null, 3, 4, 5}} - {{writer, 0, 1, 2}}:
            with contextlib.suppress(OSError):
                os.close(fd)
        SOURCE = SOURCES[index]
        data = (ENCODE(run_tests(["-x"] if STOP else [])) + "\\n").encode()
        while data:
            data = data[WRITE(writer, data):]
        code = 0
    finally:
        EXIT(code)


def wait_for(pid, reader, deadline):
    """Whether child `pid` ended by `deadline` (killed if not), its wait status and what it wrote to
    `reader`. Whatever the child left in its process group is killed; the child is reaped."""
    try:
        ended_fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        ended_fd = None
    chunks, reading, ended = [], True, False
    try:
        while not ended:
            ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            left = deadline - time.monotonic()
            if ended or left <= 0:
                break
            watched = ([reader] if reading else []) + ([ended_fd] if ended_fd is not None else [])
            ready = select.select(watched, [], [], left if ended_fd is not None else min(left, 0.01))[0]
            if reader in ready:
                chunk = os.read(reader, 1 << 16)
                chunks.append(chunk)
                reading = bool(chunk)
    finally:
        if ended_fd is not None:
            os.close(ended_fd)
    for kill in (os.killpg, os.kill):  # the child is not reaped yet: its pid still names it and its group
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.set_blocking(reader, False)
    with contextlib.suppress(OSError):
        chunks.append(os.read(reader, 1 << 16))
        while chunks[-1]:
            chunks.append(os.read(reader, 1 << 16))
    return ended, status, b"".join(chunks)


def verdict(index, ended, status, data, seconds, limit):
    """The report of candidate `index`: the child's own, or why there is none."""
    if not ended:
        return {{"index": index, "problem": "timeout", "seconds": limit}}
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        how = (f"killed by signal {{signal.Signals(os.WTERMSIG(status)).name}}" if os.WIFSIGNALED(status)
               else f"its process exited with code {{os.WEXITSTATUS(status)}} before its report")
        return {{"index": index, "problem": "ended", "detail": how}}
    lines = data.split(b"\\n")
    if len(lines) != 2 or lines[1]:
        return {{"index": index, "problem": "forged" if len(lines) > 2 else "no-report"}}
    try:
        found = json.loads(lines[0])
    except ValueError:
        found = None
    if not isinstance(found, dict):
        return {{"index": index, "problem": "no-report"}}
    found["index"], found["seconds"] = index, round(seconds, 3)
    return found


def run_each():
    """Every candidate in a forked child of its own, one at a time, each report written as it ends."""
    if len(SOURCES) > 1:
        warm_up()
        # What is loaded now stays: no child's collections walk it (pytest collects garbage at each end).
        gc.collect()
        gc.freeze()
    first = None
    for index in range(len(SOURCES)):
        if index and START_WITHIN is not None and time.monotonic() - BEGAN > START_WITHIN:
            report({{"index": index, "problem": "unrun"}})
            continue
        limit = EACH if first is None or PACE is None else min(EACH, max(PACE_FLOOR, PACE * first))
        reader, writer = os.pipe()
        started = time.monotonic()
        try:
            pid = os.fork()
        except OSError as exc:  # out of processes (what an earlier candidate left is killed, not yet reaped)
            os.close(reader)
            os.close(writer)
            report({{"index": index, "problem": "ended", "detail": f"its process could not start: {{exc}}"}})
            continue
        if pid == 0:
            os.close(reader)
            child(index, writer)
        os.close(writer)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        ended, status, data = wait_for(pid, reader, started + limit)
        os.close(reader)
        seconds = time.monotonic() - started
        first = seconds if first is None else first
        report(verdict(index, ended, status, data, seconds, limit))


if FORK:
    run_each()
else:
    report(run_tests([]))
'''


@dataclass(frozen=True)
class Each:
    """How a job of several candidates runs each one (`ProjectTests.run_many`)."""

    seconds: float
    """Wall-clock seconds one candidate's run may take; one that runs longer is killed (its `problem`)."""
    stop_at_first_failure: bool = True
    pace: float | None = None
    """When set: a candidate after the first may take at most this many times as long as the first did (at
    least PACE_FLOOR seconds, at most `seconds`)."""
    start_within: float | None = None
    """When set: no candidate after the first starts once the job has run this many seconds."""


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
    unrun: bool = False
    """A candidate of `ProjectTests.run_many` that was not started: the time it allowed was up (`problem`
    says so). Its tests neither passed nor failed."""

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


def tests_job(found: ModuleImport, candidate: str | Sequence[str], selection: TestSelection, timeout: float,
              mark: str = REPORT_MARK, *, each: Each | None = None) -> Job:
    """A job running `selection` with pytest against `candidate`, the module at `found` with a new body;
    its report line starts with `mark`. With `each`, `candidate` is several candidates, each run in a child
    process of its own (`Each`), one report line per candidate, in order, each carrying its index."""
    config = pytest_config(found.path.parent, found.root)
    args = _kept_addopts(config.addopts if config else ())
    sources = [candidate] if isinstance(candidate, str) else list(candidate)
    program = _DRIVER.format(
        name=found.name, rel=found.path.relative_to(found.root).as_posix(), package=found.is_package,
        sources=sources, tests=list(selection.node_ids), args=args,
        max_failures=MAX_FAILURES, failure_chars=FAILURE_CHARS, mark=mark, pace_floor=PACE_FLOOR,
        each=(False, False, timeout, None, None) if each is None else
        (True, each.stop_at_first_failure, each.seconds, each.pace, each.start_within))
    return Job(source=program, filename="project_tests.py", doctest_targets=(), timeout=timeout,
               output_limit=64 * 1024 * len(sources), project_root=found.root,
               import_paths=found.import_paths)


def _job_problem(result: RunResult, selection: TestSelection) -> TestsRun | None:
    """Why a job that did not end well has no report to read (None when it ended well)."""
    files = ", ".join(selection.files)
    if result.status == "timeout":
        return TestsRun(problem=f"the project's tests ({files}) did not finish within the time allowed "
                                "(the `test_timeout` setting)")
    if result.status == "cancelled":
        return TestsRun(problem="cancelled")
    if result.status != "ok":  # the program ended before its own end: whatever it printed is not a report
        why = result.detail or (result.module_error.message if result.module_error else result.status)
        return TestsRun(problem=f"the project's tests ({files}) ended early: {' '.join(str(why).split())}")
    return None


def _reports(result: RunResult, mark: str) -> list[object]:
    """The job's report lines (those starting with `mark`), parsed (None for one that is not JSON)."""
    found: list[object] = []
    for line in result.stdout.splitlines():
        if line.startswith(mark):
            try:
                found.append(json.loads(line[len(mark):]))
            except ValueError:
                found.append(None)
    return found


def _forged(selection: TestSelection) -> TestsRun:
    return TestsRun(problem=f"the project's tests ({', '.join(selection.files)}) gave no report: the code "
                            "under test wrote into the report channel")


def _job_error(found: dict[str, Any], interpreter: str, selection: TestSelection) -> TestsRun:
    """A report saying the tests could not run at all (no pytest, the project not visible)."""
    if found.get("error") == "no-pytest":
        return TestsRun(problem=f"pytest is not installed for {interpreter}, so the project's tests "
                                f"({', '.join(selection.files)}) were not run")
    return TestsRun(problem=f"the project's tests could not be run: {found['error']}")


def _from_report(found: dict[str, Any]) -> TestsRun:
    """What one report line says the tests found."""
    failures = tuple(TestFailure(*(str(f.get(key, "")) for key in ("test", "when", "text", "crash")))
                     for f in found.get("failures", []) if isinstance(f, dict))
    counts = (int(found.get(key, 0)) for key in ("passed", "failed", "skipped"))
    ids = tuple((str(pair[0]), str(pair[1])) for pair in found.get("failed_ids", [])
                if isinstance(pair, list) and len(pair) == 2)
    lines = frozenset(n for n in found.get("lines", []) if isinstance(n, int))
    return TestsRun(*counts, failures=failures, failed_ids=ids, lines_run=lines)


def read_tests_run(result: RunResult, interpreter: str, selection: TestSelection,
                   mark: str = REPORT_MARK) -> TestsRun:
    """The report line the job printed (the one line starting with `mark`), or why there is none."""
    files = ", ".join(selection.files)
    problem = _job_problem(result, selection)
    if problem is not None:
        return problem
    reports = _reports(result, mark)
    if len(reports) > 1:
        return _forged(selection)
    found = reports[0] if reports else None
    if not isinstance(found, dict):
        why = result.detail or (result.module_error.message if result.module_error else result.status)
        return TestsRun(problem=f"the project's tests ({files}) could not be run: "
                                f"{' '.join(str(why).split())}")
    if "error" in found:
        return _job_error(found, interpreter, selection)
    return _from_report(found)


def read_tests_runs(result: RunResult, interpreter: str, selection: TestSelection, count: int,
                    mark: str = REPORT_MARK) -> list[TestsRun]:
    """The reports of a job that ran `count` candidates (`tests_job` with `each`), one TestsRun each, in
    order: a candidate with no report line, or with more than one (the code under test wrote into the
    report channel), has none; a job that did not end well, or that could not run the tests at all, gives
    every candidate the same problem."""
    problem = _job_problem(result, selection)
    if problem is not None:
        return [problem] * count
    reports = _reports(result, mark)
    errors = [found for found in reports if isinstance(found, dict) and "error" in found]
    if errors:
        return [_job_error(errors[0], interpreter, selection)] * count
    by_index: dict[int, list[dict[str, Any]]] = {}
    for report in reports:
        index = report.get("index") if isinstance(report, dict) else None
        if isinstance(report, dict) and isinstance(index, int) and not isinstance(index, bool):
            by_index.setdefault(index, []).append(report)
    runs: list[TestsRun] = []
    for index in range(count):
        lines = by_index.get(index, [])
        if len(lines) > 1:
            runs.append(_forged(selection))
        elif lines and lines[0].get("problem") == "unrun":
            runs.append(TestsRun(problem=f"the project's tests ({', '.join(selection.files)}) were not run: "
                                         "the time allowed for the candidates was up", unrun=True))
        elif not lines or lines[0].get("problem") is not None:
            found = lines[0] if lines else {"problem": "no-report"}
            runs.append(TestsRun(problem=_candidate_problem(found["problem"], found, selection)))
        else:
            runs.append(_from_report(lines[0]))
    return runs


def _candidate_problem(kind: object, found: dict[str, Any], selection: TestSelection) -> str:
    """The sentence for a candidate whose run the job could not read (`kind` as the driver says)."""
    files = ", ".join(selection.files)
    if kind == "timeout":
        seconds = found.get("seconds")
        allowed = f" ({seconds:.1f} s)" if isinstance(seconds, int | float) else ""
        return f"the project's tests ({files}) did not finish within the time allowed{allowed}"
    if kind == "ended":
        return f"the project's tests ({files}) ended early: {' '.join(str(found.get('detail', '')).split())}"
    if kind == "forged":
        return _forged(selection).problem or ""
    return f"the project's tests ({files}) could not be run: they gave no report"


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

    def run_many(self, sandbox: Sandbox, candidates: Sequence[str], cancel: threading.Event | None = None, *,
                 stop_at_first_failure: bool = True, each_seconds: float | None = None,
                 pace: float | None = None, start_within: float | None = None) -> list[TestsRun]:
        """The tests run against each of `candidates` in ONE sandbox job (one interpreter and pytest start):
        what they found for each, in order. Each candidate runs in a child process of its own, forked after
        pytest and its plugins were loaded, so whatever one does (hang, crash, change the interpreter's
        state) cannot reach the next; one that could not be read has `problem` set.

        `stop_at_first_failure`: a candidate's run stops at its first failing test (all a mutant needs);
        `each_seconds`: how long one candidate's run may take (default: the `test_timeout` one run has);
        `pace`: when set, a candidate after the first may take at most this many times as long as the first
        did (never less than PACE_FLOOR seconds): with the body itself first, a mutant that hangs costs a
        few of its runs, not a whole `test_timeout`; `start_within`: no candidate after the first starts once
        the job has run this many seconds (those left have `unrun` set)."""
        if not candidates:
            return []
        mark = f"{REPORT_MARK.rstrip(': ')}-{secrets.token_hex(12)}: "
        each = Each(each_seconds if each_seconds is not None else self.timeout, stop_at_first_failure, pace,
                    start_within)
        # the job's own start and pytest's loading may take what one run may; then each candidate its own
        timeout = self.timeout + each.seconds * len(candidates)
        if start_within is not None:  # no candidate starts after that: the last one started may take its own
            timeout = min(timeout, self.timeout + start_within + each.seconds)
        job = tests_job(self.found, candidates, self.selection, timeout, mark, each=each)
        result = sandbox.run(job, cancel)
        return read_tests_runs(result, self.interpreter, self.selection, len(candidates), mark)

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
