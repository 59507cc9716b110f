"""The worker's result message -> `RunResult`, checked field by field (the worker shares a sandbox with
untrusted code, so its reply is validated like any other untrusted input)."""

from __future__ import annotations

from typing import Any, get_args

from pycapsule.sandbox.api import (
    ExampleFailure,
    ExceptionInfo,
    FunctionReport,
    Job,
    MissingKind,
    MissingResource,
    RunResult,
    Status,
)


class BadReply(ValueError):
    """The reply does not have the agreed shape."""


def _str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise BadReply(f"{name} is not a string")
    return value


def _int(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadReply(f"{name} is not an integer")
    return value


def _optional_int(value: Any, name: str) -> int | None:
    return None if value is None else _int(value, name)


def _optional_str(value: Any, name: str) -> str | None:
    return None if value is None else _str(value, name)


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadReply(f"{name} is not a list")
    return value


def _dict(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadReply(f"{name} is not an object")
    return value


def missing_resource(value: Any) -> MissingResource | None:
    if value is None:
        return None
    data = _dict(value, "missing")
    kind = data.get("kind")
    if kind not in get_args(MissingKind):
        raise BadReply(f"unknown missing kind {kind!r}")
    return MissingResource(kind=kind, detail=_str(data.get("detail"), "missing.detail"))


def exception_info(value: Any) -> ExceptionInfo | None:
    if value is None:
        return None
    data = _dict(value, "exception")
    return ExceptionInfo(
        type=_str(data.get("type"), "exception.type"),
        message=_str(data.get("message"), "exception.message"),
        line=_optional_int(data.get("line"), "exception.line"),
        source_line=_optional_str(data.get("source_line"), "exception.source_line"),
        traceback=_str(data.get("traceback", ""), "exception.traceback"),
        origin=_optional_str(data.get("origin"), "exception.origin"),
        missing=missing_resource(data.get("missing")),
    )


def example_failure(value: Any) -> ExampleFailure:
    data = _dict(value, "failure")
    return ExampleFailure(
        qualname=_str(data.get("qualname"), "failure.qualname"),
        source=_str(data.get("source"), "failure.source"),
        line=_int(data.get("line"), "failure.line"),
        expected=_str(data.get("expected"), "failure.expected"),
        got=_str(data.get("got"), "failure.got"),
        exception=exception_info(data.get("exception")),
        note=_optional_str(data.get("note"), "failure.note"),
        document=_optional_str(data.get("document"), "failure.document"),
    )


def function_report(value: Any) -> FunctionReport:
    data = _dict(value, "function")
    return FunctionReport(
        qualname=_str(data.get("qualname"), "function.qualname"),
        attempted=_int(data.get("attempted"), "function.attempted"),
        failed=_int(data.get("failed"), "function.failed"),
        failures=tuple(example_failure(f) for f in _list(data.get("failures", []), "function.failures")),
        parse_error=_optional_str(data.get("parse_error"), "function.parse_error"),
        skipped=_int(data.get("skipped", 0), "function.skipped"),
        documents=tuple(_str(d, "function.documents") for d in _list(data.get("documents", []),
                                                                       "function.documents")),
        documented=_int(data.get("documented", 0), "function.documented"),
    )


def _capped(text: str, limit: int) -> tuple[str, bool]:
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", "ignore"), True


def run_result(reply: dict[str, Any], job: Job, duration: float, warnings: tuple[str, ...]) -> RunResult:
    status = _str(reply.get("status"), "status")
    if status not in get_args(Status):
        raise BadReply(f"unknown status {status!r}")
    # The output cap is enforced here too: the worker's own cap is not trusted.
    stdout, cut_out = _capped(_str(reply.get("stdout", ""), "stdout"), job.output_limit)
    stderr, cut_err = _capped(_str(reply.get("stderr", ""), "stderr"), job.output_limit)
    return RunResult(
        status=status,  # type: ignore[arg-type]
        functions=tuple(function_report(f) for f in _list(reply.get("functions", []), "functions")),
        module_error=exception_info(reply.get("module_error")),
        stdout=stdout,
        stderr=stderr,
        output_truncated=bool(reply.get("truncated")) or cut_out or cut_err,
        duration=duration,
        detail=_str(reply.get("detail", ""), "detail"),
        warnings=warnings,
        lines_run=tuple(_int(line, "lines_run") for line in _list(reply.get("lines_run", []), "lines_run")),
    )
