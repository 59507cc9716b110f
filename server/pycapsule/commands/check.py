"""`pycapsule check PATH[::QUALNAME]`: run doctests in the sandbox and report per function and example.

Exit 0 when everything passed, 1 when something failed (or the file does not compile), 2 on a usage
error (no such file, unknown function, no sandbox available). Runs through the same `Engine` as
`generate` and the language server, so `[tool.pycapsule]` settings apply here too.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from pycapsule.capsule import CapsuleError, nul_byte_line, read_source_file
from pycapsule.commands.targets import UsageError, parse_target
from pycapsule.config import load_settings, project_root
from pycapsule.doctest_items import qualnames
from pycapsule.engine import Engine
from pycapsule.sandbox.api import SandboxUnavailable
from pycapsule.sandbox.report import json_report, text_report
from pycapsule.terminal import terminal_safe

FILE_TIMEOUT = 60.0
"""A whole file's doctests share one job; one function's get the configured job timeout."""


def _emit(args: argparse.Namespace, payload: dict[str, object], lines: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, indent=2))  # JSON escapes control characters itself
    else:
        for line in lines:
            print(terminal_safe(line))


def parse_for_check(source: str, path: Path) -> ast.Module:
    """ast.parse, with every way a file can fail to parse as a SyntaxError that names a line."""
    line = nul_byte_line(source)
    if line is not None:
        raise SyntaxError("a NUL byte (Python source cannot contain one)", (str(path), line, None, None))
    try:
        return ast.parse(source, str(path))
    except SyntaxError as error:
        error.lineno = error.lineno or 1
        raise
    except (ValueError, RecursionError, MemoryError) as error:  # e.g. nesting deeper than the parser goes
        raise SyntaxError(f"the file cannot be parsed ({type(error).__name__}: {error})",
                          (str(path), 1, None, None)) from None


def run(args: argparse.Namespace) -> int:
    try:
        target = parse_target(args.target, "check")
        path, qualname = target.path, target.qualname
        try:
            source = read_source_file(path).text
        except CapsuleError as error:
            raise UsageError(error.message.rstrip(".")) from error
        except OSError as error:
            raise UsageError(f"{path} cannot be read: {error.strerror or error}") from error
        try:
            parse_for_check(source, path)
        except SyntaxError as error:
            where = f"{path}:{error.lineno}" + (f":{error.offset}" if error.offset else "")
            message = f"{where}: syntax error: {error.msg}"
            _emit(args, {"path": str(path), "passed": False, "error": message, "line": error.lineno},
                  [message])
            return 1
        if qualname is not None and qualname not in qualnames(source):
            raise UsageError(f"there is no function or class named {qualname!r} in {path}")
        loaded = load_settings(path, {"sandbox": args.backend} if args.backend else None)
        for warning in loaded.warnings:
            print(terminal_safe(f"pycapsule check: warning: {warning}"), file=sys.stderr)
        with Engine(loaded.settings, project_root=project_root(path)) as engine:
            result = engine.check(source, path, (qualname,) if qualname else None,
                                  None if qualname else max(FILE_TIMEOUT, loaded.settings.job_timeout))
            backend = engine.sandbox().name
    except (UsageError, SandboxUnavailable) as error:
        print(terminal_safe(f"pycapsule check: {error}"), file=sys.stderr)
        return 2
    for warning in result.warnings:
        print(f"pycapsule check: warning: {warning}", file=sys.stderr)
    payload = {"path": str(path), "backend": backend, **json_report(result)}
    lines = text_report(result, str(path))
    if not result.functions and result.status == "ok":
        lines.append(f"no doctests found in {path}" + (f"::{qualname}" if qualname else ""))
    _emit(args, payload, lines)
    return 0 if result.passed else 1
