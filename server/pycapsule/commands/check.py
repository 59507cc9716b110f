"""`pycapsule check PATH[::QUALNAME]`: run doctests in the sandbox and report per function and example.

Exit codes come from `pycapsule.exit_codes` (0 all passed, 1 a doctest failed or the file does not
compile, 2 usage error, 4 no sandbox). Runs through the same `Engine` as `generate` and the language
server, so `[tool.pycapsule]` settings apply here too.
"""

from __future__ import annotations

import argparse
import sys

from pycapsule.commands import SUMMARIES
from pycapsule.commands.options import Subcommands, add_backend, add_json, add_python, add_target
from pycapsule.commands.output import CommandError, UsageError, print_document, say
from pycapsule.commands.targets import read_target
from pycapsule.config import load_settings, project_root
from pycapsule.doctest_items import qualnames
from pycapsule.engine import Engine
from pycapsule.exit_codes import ExitCode
from pycapsule.interpreter import settings_interpreter
from pycapsule.sandbox.api import SandboxUnavailable
from pycapsule.sandbox.report import json_report, text_report
from pycapsule.terminal import terminal_safe
from pycapsule.tests_job import ProjectTests, TestsRun

FILE_TIMEOUT = 60.0
"""A whole file's doctests share one job; one function's get the configured job timeout."""

PREFIX = "pycapsule check"


def register(commands: Subcommands) -> None:
    check = commands.add_parser("check", help=SUMMARIES["check"])
    add_target(check)
    add_backend(check)
    add_python(check)
    check.add_argument("--tests", action="store_true",
                       help="also run the project's tests of these functions (pytest, in the sandbox)")
    add_json(check)


def run(args: argparse.Namespace) -> int:
    try:
        return _check(args)
    except CommandError as error:
        if error.kind == "syntax" and not args.json:
            print(terminal_safe(error.message))  # a finding about the file: the report, on stdout
        elif not args.json:
            say(PREFIX, error.message)
        if args.json:
            return print_document("check", error.code, error, path=args.target.partition("::")[0])
        return int(error.code)


def _tests_lines(tests: ProjectTests | None, ran: TestsRun | None) -> list[str]:
    """What check says of the project's tests: their result, or that they exist and how to run them."""
    if tests is None:
        return []
    files = ", ".join(tests.selection.files)
    if ran is None:
        count = len(tests.selection.node_ids)
        return [f"{count} project test(s) exercise this ({files}): add --tests to run them too"]
    if ran.problem is not None:
        return [f"project tests: {ran.problem}"]
    lines = [f"project tests ({files}): {ran.passed} passed, {ran.failed} failed"]
    lines += [f"FAIL {failure.test}: {' '.join(failure.crash.split())[:200]}" for failure in ran.failures]
    return lines


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


def _check(args: argparse.Namespace) -> int:
    read = read_target(args.target, "check")
    path, qualname, source = read.target.path, read.target.qualname, read.source.text
    if qualname is not None and qualname not in qualnames(source):
        raise UsageError(f"there is no function or class named {qualname!r} in {path}")
    loaded = load_settings(path, {"sandbox": args.backend, "python": args.python})
    for warning in loaded.warnings:
        say(PREFIX, f"warning: {warning}")
    try:
        root = project_root(path)
        interpreter = settings_interpreter(loaded, root)
        with Engine(loaded.settings, project_root=root, interpreter=interpreter) as engine:
            result = engine.check(source, path, (qualname,) if qualname else None,
                                  None if qualname else max(FILE_TIMEOUT, loaded.settings.job_timeout))
            backend = engine.sandbox().name
            tests = engine.tests_for(source, path, qualname)
            ran = engine.run_tests(tests, source) if tests is not None and args.tests else None
    except SandboxUnavailable as error:
        raise CommandError(str(error), kind="sandbox", code=ExitCode.SANDBOX_UNAVAILABLE) from None
    for warning in result.warnings:
        say(PREFIX, f"warning: {warning}")
    tests_failed = ran is not None and (ran.problem is not None or ran.failed > 0)
    code = ExitCode.OK if result.passed and not tests_failed else ExitCode.FAILED
    if args.json:
        report = {key: value for key, value in json_report(result).items()}
        return print_document("check", code, None, path=str(path), backend=backend, **report,
                              tests=_tests_json(tests, ran))
    lines = text_report(result, str(path))
    if not result.functions and result.status == "ok":
        lines.append(f"no doctests found in {path}" + (f"::{qualname}" if qualname else ""))
    lines += _tests_lines(tests, ran)
    for line in lines:
        print(terminal_safe(line))
    sys.stdout.flush()
    return int(code)
