"""RunResult -> what a person reads in a terminal, or plain JSON."""

from __future__ import annotations

import dataclasses
from typing import Any

from pycapsule.sandbox.api import ExceptionInfo, RunResult


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.rstrip("\n").splitlines()) or prefix


def describe_exception(info: ExceptionInfo) -> str:
    where = f" at line {info.line}: {info.source_line}" if info.line else ""
    return f"{info.type}: {info.message}{where}"


def text_report(result: RunResult, path: str) -> list[str]:
    """Per function, per failing example; the non-ok statuses in one line each."""
    lines: list[str] = []
    for function in result.functions:
        if function.parse_error:
            lines.append(f"ERROR {function.qualname}: {function.parse_error}")
            continue
        if function.failed == 0:
            lines.append(f"PASS  {function.qualname} ({function.attempted} examples)")
            continue
        lines.append(f"FAIL  {function.qualname}: {function.failed} of {function.attempted} examples failed")
        for failure in function.failures:
            lines.append(f"  {path}:{failure.line}: >>> {failure.source}")
            lines.append("    expected:")
            lines.append(_indent(failure.expected))
            if failure.exception is not None:
                lines.append("    raised: " + describe_exception(failure.exception))
            else:
                lines.append("    got:")
                lines.append(_indent(failure.got))
    if result.module_error is not None:
        error = result.module_error
        location = f"{path}:{error.line}" if error.line else path
        lines.append(f"ERROR {location}: the module raised {describe_exception(error)}")
    if result.status not in ("ok", "error"):
        lines.append(f"{result.status.upper()}: {result.detail}")
    if result.output_truncated:
        lines.append("(the job's output was truncated)")
    return lines


def json_report(result: RunResult) -> dict[str, Any]:
    data = dataclasses.asdict(result)
    data["passed"] = result.passed
    return data
