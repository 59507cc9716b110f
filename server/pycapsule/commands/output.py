"""What a command ends with: an exit code from the one table and, with --json, exactly one JSON document.

Every document has `command`, `ok` (exit code 0), `exit_code` and `error` (null, or an object with
`kind`, `message` and, for a syntax error, `line`), plus the fields of its command, always all of them
(empty on an early error). docs/generate.md describes the shapes.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

from pycapsule.exit_codes import ExitCode
from pycapsule.terminal import terminal_safe

ErrorKind = Literal["usage", "syntax", "model", "sandbox", "write", "interrupted"]

COMMAND_FIELDS: dict[str, dict[str, Any]] = {
    "generate": {"path": None, "passed": False, "written": False, "diff": "", "results": []},
    "check": {"path": None, "backend": None, "passed": False, "status": None, "functions": [],
              "module_error": None, "stdout": "", "stderr": "", "output_truncated": False, "duration": 0.0,
              "detail": "", "warnings": [], "tests": None, "paths": [], "files": [],
              "summary": {"passed": 0, "passed_loosely": 0, "failed": 0, "not_verified": 0, "stubs": 0,
                          "files": 0, "files_not_checked": 0}},
    "config": {"path": None, "user_config": None, "user_config_exists": False, "pyproject": None,
               "endpoint": None, "python": None, "settings": {}, "warnings": []},
}
"""The fields each --json command adds to the envelope, with their values when nothing ran."""


class CommandError(Exception):
    """Ends a command: one sentence for the user and the exit code that goes with it."""

    kind: ErrorKind = "usage"
    code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, *, kind: ErrorKind | None = None, code: ExitCode | None = None,
                 line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind or self.kind
        self.code = code if code is not None else self.code
        self.line = line

    def as_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.line is not None:
            error["line"] = self.line
        return error


class UsageError(CommandError):
    """Exit 2 with this one sentence."""


def document(command: str | None, code: int, error: CommandError | None = None,
             **fields: Any) -> dict[str, Any]:
    """The one JSON document of `command` (None: the command line named none)."""
    body = dict(COMMAND_FIELDS.get(command or "", {}))
    unknown = set(fields) - set(body)
    if unknown:
        raise ValueError(f"not part of the {command} document: {sorted(unknown)}")
    body.update(fields)
    return {"command": command, "ok": code == ExitCode.OK, "exit_code": int(code),
            "error": error.as_json() if error else None, **body}


def print_document(command: str | None, code: int, error: CommandError | None = None, **fields: Any) -> int:
    print(json.dumps(document(command, code, error, **fields), indent=2))  # JSON escapes control characters
    return int(code)


def say(prefix: str, message: str) -> None:
    """One line on stderr; what it quotes (paths, the model's words) cannot drive the terminal."""
    print(terminal_safe(f"{prefix}: {message}"), file=sys.stderr, flush=True)
