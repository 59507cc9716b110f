"""`pycapsule check PATH[::QUALNAME]`: run doctests in the sandbox and report per function and example.

Exit 0 when everything passed, 1 when something failed (or the file does not compile), 2 on a usage
error (no such file, unknown function, no sandbox available).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from pycapsule.sandbox.api import Job, SandboxUnavailable
from pycapsule.sandbox.report import json_report, text_report
from pycapsule.sandbox.select import open_sandbox
from pycapsule.sandbox.worker import docstring_index

FUNCTION_TIMEOUT = 10.0
FILE_TIMEOUT = 60.0


class UsageError(Exception):
    pass


def split_target(target: str) -> tuple[Path, str | None]:
    path_text, _, qualname = target.partition("::")
    return Path(path_text), (qualname or None)


def module_name_for(path: Path) -> str:
    name = path.stem.replace("-", "_")
    return name if name.isidentifier() else "module"


def read_source(path: Path) -> str:
    if not path.is_file():
        raise UsageError(f"{path} is not a file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start})") from error
    except OSError as error:
        raise UsageError(f"{path} cannot be read: {error.strerror}") from error


def _emit(args: argparse.Namespace, payload: dict[str, object], lines: list[str], stream=None) -> None:
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        for line in lines:
            print(line, file=stream or sys.stdout)


def run(args: argparse.Namespace) -> int:
    path, qualname = split_target(args.target)
    try:
        source = read_source(path)
        try:
            tree = ast.parse(source, str(path))
        except SyntaxError as error:
            where = f"{path}:{error.lineno}" + (f":{error.offset}" if error.offset else "")
            message = f"{where}: syntax error: {error.msg}"
            _emit(args, {"path": str(path), "passed": False, "error": message, "line": error.lineno},
                  [message])
            return 1
        if qualname is not None and qualname not in docstring_index(tree, every=False):
            raise UsageError(f"there is no function or class named {qualname!r} in {path}")
        sandbox = open_sandbox(args.backend, path.resolve().parent)
    except (UsageError, SandboxUnavailable) as error:
        print(f"pycapsule check: {error}", file=sys.stderr)
        return 2
    try:
        job = Job(
            source=source,
            filename=path.name,
            module_name=module_name_for(path),
            doctest_targets=(qualname,) if qualname else None,
            timeout=FUNCTION_TIMEOUT if qualname else FILE_TIMEOUT,
            project_root=path.resolve().parent,
        )
        result = sandbox.run(job)
    finally:
        sandbox.close()
    for warning in result.warnings:
        print(f"pycapsule check: warning: {warning}", file=sys.stderr)
    payload = {"path": str(path), "backend": sandbox.name, **json_report(result)}
    lines = text_report(result, str(path))
    if not result.functions and result.status == "ok":
        lines.append(f"no doctests found in {path}" + (f"::{qualname}" if qualname else ""))
    _emit(args, payload, lines)
    return 0 if result.passed else 1
