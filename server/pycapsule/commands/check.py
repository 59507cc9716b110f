"""`pycapsule check [PATH[::QUALNAME]]...`: run doctests in the sandbox and report per function.

PATH is a file (optionally one function), a folder (the `.py` files a user means: `collect.py`), several of
them, or none (the project around the current folder). Every file's doctests run through one warm sandbox
(`Engine.check`, as `generate` and the language server run them); each function ends passed, failed, not
verified or a stub, and the run ends with one summary line. Exit codes come from `pycapsule.exit_codes`: 0
when nothing failed (stubs and functions not verified do not fail a run), 1 when a function failed, a file
could not be checked or a project test failed, 2 usage error, 4 no sandbox. `[tool.pycapsule]` settings
apply per project.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pycapsule.capsule import Capsule, read_capsules
from pycapsule.commands import SUMMARIES, wording
from pycapsule.commands.collect import FileToCheck, collect, the_project
from pycapsule.commands.options import Subcommands, add_backend, add_json, add_python
from pycapsule.commands.output import CommandError, print_document, say
from pycapsule.commands.targets import ReadTarget, no_such_function, read_target
from pycapsule.config import load_settings, project_root
from pycapsule.debugging.sandbox_lacks import unrunnable
from pycapsule.doc_examples import documents_module
from pycapsule.doctest_items import qualnames
from pycapsule.engine import Engine
from pycapsule.exit_codes import ExitCode
from pycapsule.interpreter import settings_interpreter
from pycapsule.sandbox.api import FunctionReport, RunResult, SandboxUnavailable
from pycapsule.sandbox.report import json_report, text_report
from pycapsule.strength.check import Strength
from pycapsule.terminal import terminal_safe
from pycapsule.tests_job import ProjectTests, TestsRun

FILE_TIMEOUT = 60.0
"""A whole file's doctests share one job; one function's get the configured job timeout."""

PREFIX = "pycapsule check"

Verdict = Literal["passed", "failed", "not_verified", "stub"]


def register(commands: Subcommands) -> None:
    check = commands.add_parser("check", help=SUMMARIES["check"])
    check.add_argument("targets", nargs="*", metavar="PATH[::QUALNAME]",
                       help="Python files and folders (default: the project around the current folder); "
                            "a file may name one function: mod.py::Class.method")
    add_backend(check)
    add_python(check)
    check.add_argument("--tests", action="store_true",
                       help="also run the project's tests of these functions (pytest, in the sandbox)")
    check.add_argument("--strength", action="store_true",
                       help="for each function that passes, how many small changes of its body its examples "
                            "(and, with --tests, its tests) catch; exit 5 when one is loosely pinned")
    add_json(check)


def run(args: argparse.Namespace) -> int:
    try:
        return _check(args)
    except CommandError as error:
        if args.json:
            one = args.targets[0].partition("::")[0] if len(args.targets) == 1 else None
            return print_document("check", error.code, error, path=one, paths=list(args.targets))
        say(PREFIX, error.message)
        return int(error.code)


def verdict(function: FunctionReport, capsule: Capsule | None) -> Verdict:
    """One function's result: a stub (a function with no body yet) whatever its examples did; not verified
    when no example checks it (all skipped, or those that run only set up, as `generate` judges, and no
    documentation example calls it) or every failing example failed only for what the sandbox lacks (the
    network, a file its text names)."""
    if capsule is not None and capsule.is_stub:
        return "stub"
    if function.parse_error:
        return "failed"
    if function.failed:
        return "not_verified" if capsule is not None and unrunnable(function, capsule) else "failed"
    checked = capsule is None or capsule.verified_by_doctests or function.documented > 0
    if function.attempted == 0 or not checked:
        return "not_verified"
    return "passed"


@dataclass
class FileResult:
    item: FileToCheck
    result: RunResult | None = None
    error: CommandError | None = None
    """It could not be checked at all: a syntax error, or (found in a folder) it cannot be read."""
    verdicts: list[Verdict] = field(default_factory=list)
    """One per function of `result`, in its order."""
    tests: ProjectTests | None = None
    ran: TestsRun | None = None
    strengths: dict[str, Strength | None] = field(default_factory=dict)
    """With --strength: each passing function's, by qualname (None: not measured)."""
    min_caught: float = 0.0
    strict_signatures: bool = False

    @property
    def checked(self) -> bool:
        """The whole file ran: read, parsed, imported, and the job ended normally."""
        return (self.error is None and self.result is not None and self.result.status == "ok"
                and self.result.module_error is None)

    @property
    def tests_failed(self) -> bool:
        return self.ran is not None and (self.ran.problem is not None or self.ran.failed > 0)

    def loose(self, qualname: str) -> bool:
        found = self.strengths.get(qualname)
        return found is not None and not found.pinned(self.min_caught, self.strict_signatures)


class Engines:
    """One `Engine` per project (its own settings), all sharing one warm sandbox per interpreter (the
    sandbox keeps a worker per project folder)."""

    def __init__(self, args: argparse.Namespace, stack: ExitStack) -> None:
        self.overrides = {"sandbox": args.backend, "python": args.python}
        self.stack = stack
        self.by_project: dict[Path, Engine] = {}
        self.owners: dict[tuple[str | None, str | None], Engine] = {}
        self.said: set[str] = set()

    def say_once(self, message: str) -> None:
        if message not in self.said:
            self.said.add(message)
            say(PREFIX, wording.warning(message))

    def for_file(self, path: Path) -> Engine:
        root = project_root(path)
        key = root or path.resolve().parent
        engine = self.by_project.get(key)
        if engine is not None:
            return engine
        loaded = load_settings(root or path, self.overrides)
        for warning in loaded.warnings:
            self.say_once(warning)
        interpreter = settings_interpreter(loaded, root)
        owner = self.owners.get((loaded.settings.sandbox, interpreter.path))
        shared = owner.sandbox() if owner is not None else None
        engine = self.stack.enter_context(Engine(loaded.settings, project_root=root, interpreter=interpreter,
                                                 sandbox=shared))
        self.owners.setdefault((loaded.settings.sandbox, interpreter.path), engine)
        self.by_project[key] = engine
        return engine

    @property
    def backend(self) -> str | None:
        """The sandbox's name, once one ran a job."""
        return next((engine.sandbox().name for engine in self.owners.values()), None)


def _read(item: FileToCheck) -> ReadTarget | CommandError:
    """The file read and parsed, or why it cannot be checked (a syntax error; for a file found in a folder,
    also a file that cannot be read or decoded). Raises UsageError for a file named on the command line
    that cannot be read, or a function it does not have."""
    try:
        read = read_target(str(item.path) + (f"::{item.qualname}" if item.qualname else ""), "check")
    except CommandError as error:
        if error.kind != "syntax" and item.named:
            raise
        return error
    if item.qualname is not None and item.qualname not in qualnames(read.source.text):
        known = [capsule.qualname for capsule in read_capsules(read.source.text, item.path)]
        raise no_such_function(item.path, item.qualname, known)
    return read


def has_examples(path: Path) -> bool:
    """Whether a file found in a folder is checked: its text holds an example (`>>>`), or the project's
    documentation has examples of it (`doc_examples`). One that has neither has nothing to run, and
    importing it (or reporting its syntax) is not what was asked. True when it cannot be read, so that this
    is said."""
    try:
        return b">>>" in path.read_bytes() or documents_module(path)
    except OSError:
        return True


def _check_file(item: FileToCheck, read: ReadTarget | CommandError, engines: Engines, find_tests: bool,
                run_tests: bool, strength: bool = False) -> FileResult:
    """The file's doctests run in the sandbox, with their verdicts and, asked, the project's tests."""
    if isinstance(read, CommandError):
        return FileResult(item, error=read)
    source, path = read.source.text, read.target.path
    engine = engines.for_file(path)
    timeout = None if item.qualname else max(FILE_TIMEOUT, engine.settings.job_timeout)
    result = engine.check(source, path, (item.qualname,) if item.qualname else None, timeout)
    capsules = {capsule.qualname: capsule for capsule in read_capsules(source, path)}  # the last one wins
    found = FileResult(item, result, verdicts=[verdict(function, capsules.get(function.qualname))
                                               for function in result.functions])
    if find_tests and (item.qualname is None or item.qualname in capsules):
        found.tests = engine.tests_for(source, path, item.qualname)
        if found.tests is not None and run_tests:
            found.ran = engine.run_tests(found.tests, source)
    if strength:
        found.min_caught = engine.settings.min_caught
        found.strict_signatures = engine.settings.strict_signatures
        for function, said in zip(result.functions, found.verdicts, strict=True):
            capsule = capsules.get(function.qualname)
            if said == "passed" and capsule is not None:
                found.strengths[function.qualname] = engine.strength(
                    capsule, source, _passing_tests(engine, source, capsule, found) if run_tests else None)
    return found


def _passing_tests(engine: Engine, source: str, capsule: Capsule, found: FileResult) -> ProjectTests | None:
    """The project's tests of one function, when they pass on `source` (only passing tests judge changes);
    the file's own run when it was of that function alone."""
    if capsule.path is None:
        return None
    if found.item.qualname == capsule.qualname and found.ran is not None:
        return found.tests if found.ran.ok else None
    tests = engine.tests_for(source, capsule.path, capsule.qualname)
    return tests if tests is not None and engine.run_tests(tests, source).ok else None


def _check(args: argparse.Namespace) -> int:
    targets = list(args.targets) or [str(the_project())]
    items = collect(targets)
    single = len(args.targets) == 1 and len(items) == 1 and items[0].named
    named = {id(item): _read(item) for item in items if item.named}  # usage errors before anything runs
    files: list[FileResult] = []
    try:
        with ExitStack() as stack:
            engines = Engines(args, stack)
            for item in items:
                if not item.named and not has_examples(item.path):
                    continue
                read = named[id(item)] if item.named else _read(item)
                # finding a file's tests reads every test file for every function: in a run over several
                # files, only when they are to be run
                done = _check_file(item, read, engines, single or args.tests, args.tests, args.strength)
                files.append(done)
                for warning in done.result.warnings if done.result else ():
                    engines.say_once(warning)
                if not args.json:
                    _print(file_lines(done, single))
            backend = engines.backend
    except SandboxUnavailable as error:
        raise CommandError(str(error), kind="sandbox", code=ExitCode.SANDBOX_UNAVAILABLE) from None
    summary = _summary(files)
    failed = summary["failed"] or summary["files_not_checked"] or any(f.tests_failed for f in files)
    loose = summary["passed_loosely"]
    code = ExitCode.FAILED if failed else ExitCode.PASSED_LOOSELY if loose else ExitCode.OK
    if args.json:
        return print_document("check", code, files[0].error if single else None, backend=backend,
                              **_top_fields(files, single), paths=targets,
                              files=[_file_json(f) for f in files], summary=summary)
    if not single and not files:
        _print([wording.no_doctests(", ".join(targets))])
    if not single or files[0].verdicts:  # else its one line (no doctests, a syntax error) is the report
        _print([wording.summary_line(summary, single)])
    return int(code)


def _print(lines: list[str]) -> None:
    for line in lines:
        print(terminal_safe(line))
    sys.stdout.flush()


# ---- what a person reads (the sentences: wording.py) ------------------------------------------------------


def file_lines(file: FileResult, single: bool) -> list[str]:
    """A file's report: in a one-file run every function, as before; in a run over several files only what
    did not pass, each named PATH::QUALNAME. A failing function shows its first failure; the others are
    folded into one line (all of them when the run named that one function)."""
    shown, qualname = str(file.item.path), file.item.qualname
    if file.error is not None:
        return [wording.not_checked(file.error.kind, file.error.message)]
    result = file.result
    assert result is not None
    lines: list[str] = []
    for function, said in zip(result.functions, file.verdicts, strict=True):
        loose = file.loose(function.qualname)
        if single or said != "passed" or loose:
            name = function.qualname if single else f"{shown}::{function.qualname}"
            lines += function_lines(function, said, shown, name, fold=qualname is None)
            asked = function.qualname in file.strengths
            lines += wording.strength_lines(file.strengths.get(function.qualname), loose, asked)
    detail = result.detail if single or not result.detail else f"{shown}: {result.detail}"
    lines += text_report(replace(result, functions=(), detail=detail), shown)
    if single and not result.functions and result.status == "ok":
        lines.append(wording.no_doctests(shown + (f"::{qualname}" if qualname else "")))
    tests = wording.tests_lines(file.tests, file.ran)
    return lines + (tests if single else [f"{shown}: {line}" for line in tests])


def function_lines(function: FunctionReport, said: Verdict, path: str, name: str, fold: bool) -> list[str]:
    if said == "stub":
        return [wording.stub(name, function.attempted, path, function.qualname)]
    kept = function.failures[:1] if fold else function.failures
    lines = text_report(RunResult("ok", (replace(function, qualname=name, failures=kept),)), path)
    if said == "not_verified" and function.failed:
        lines[0] = wording.cannot_run(name, function.failed, function.attempted)
    elif said == "not_verified" and function.attempted:
        lines[0] = wording.none_checks(name, function.attempted)
    elif said == "not_verified" and not function.skipped:
        lines[0] = wording.no_examples(name)
    more = function.failed - len(kept)
    if more > 0:
        lines.append(wording.more_failures(more, function.qualname, cannot_run=said == "not_verified"))
    return lines


# ---- --json ----------------------------------------------------------------------------------------------


def _summary(files: list[FileResult]) -> dict[str, int]:
    said = [one for file in files for one in file.verdicts]
    loosely = sum(file.loose(name) for file in files for name in file.strengths)
    return {"passed": said.count("passed"), "passed_loosely": loosely, "failed": said.count("failed"),
            "not_verified": said.count("not_verified"), "stubs": said.count("stub"), "files": len(files),
            "files_not_checked": sum(not file.checked for file in files)}


def _report_json(file: FileResult) -> dict[str, Any]:
    """The sandbox's run result, each function with its `verdict`."""
    if file.result is None:
        return {}
    report = json_report(file.result)
    for function, said in zip(report["functions"], file.verdicts, strict=True):
        function["verdict"] = said
        if function["qualname"] in file.strengths:
            strength = file.strengths[function["qualname"]]
            function["strength"] = None if strength is None else {
                **strength.as_json(), "pinned": not file.loose(function["qualname"]),
                "suggested_examples": [example.as_json() for example in strength.suggested]}
    return report


def _file_json(file: FileResult) -> dict[str, Any]:
    error = None
    if file.error is not None:
        error = {**file.error.as_json(), "kind": "syntax" if file.error.kind == "syntax" else "unreadable"}
    entry: dict[str, Any] = {
        "path": str(file.item.path), "qualname": file.item.qualname, "error": error, "passed": False,
        "status": None, "functions": [], "module_error": None, "stdout": "", "stderr": "",
        "output_truncated": False, "duration": 0.0, "detail": "", "warnings": [], "tests": None}
    entry.update(_report_json(file), tests=_tests_json(file.tests, file.ran))
    return entry


def _top_fields(files: list[FileResult], single: bool) -> dict[str, Any]:
    """A one-file run keeps the fields it always had (the file's own); a run over several files says
    whether every example passed, the total duration and every warning, and leaves the per-file fields
    empty: `files` holds them."""
    if single:
        [file] = files
        return {"path": str(file.item.path), **_report_json(file), "tests": _tests_json(file.tests, file.ran)}
    results = [file.result for file in files if file.result is not None]
    warnings = [w for result in results for w in result.warnings]
    return {"passed": all(file.error is None for file in files) and all(r.passed for r in results),
            "duration": sum(r.duration for r in results), "warnings": list(dict.fromkeys(warnings))}


def _tests_json(tests: ProjectTests | None, ran: TestsRun | None) -> dict[str, object] | None:
    if tests is None:
        return None
    selection = tests.selection
    found: dict[str, object] = {"files": list(selection.files), "selected": list(selection.node_ids),
                                "ran": ran is not None}
    if ran is not None:
        found.update(passed=ran.passed, failed=ran.failed, problem=ran.problem,
                     failures=[{"test": f.test, "message": f.crash} for f in ran.failures])
    return found
