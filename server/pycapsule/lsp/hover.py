"""Hover on a function's name: its attempt history from the store, newest first; nothing when
there is none. Reads one indexed sqlite query, so it stays well inside a hover's latency budget."""

from __future__ import annotations

import time

from lsprotocol import types

from pycapsule.history import AttemptRecord, History
from pycapsule.lsp.server import PycapsuleServer

SHOWN = 10


def register(server: PycapsuleServer) -> None:
    history: list[History] = []

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: PycapsuleServer, params: types.HoverParams) -> types.Hover | None:
        try:
            document = ls.parsed_near(params.text_document.uri, params.position.line)
        except (OSError, UnicodeDecodeError):  # not open and not readable on disk
            return None
        position = params.position
        column = (
            document.index.offset(position)
            - document.index.starts[min(position.line, len(document.index.starts) - 1)]
        )
        capsule = document.function_named_at(position.line, column)
        if capsule is None:
            return None
        if not history:
            history.append(History())
        records = history[0].attempts(document.path, capsule.qualname, limit=SHOWN)
        if not records:
            return None
        start = document.index.starts[capsule.name_line] + capsule.name_column
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=render(capsule.name, records)),
            range=document.index.range(start, start + len(capsule.name)),
        )


def render(name: str, records: list[AttemptRecord]) -> str:
    lines = [f"**pycapsule: attempts at `{name}`** (newest first)", ""]
    for record in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
        tokens = record.prompt_tokens + record.completion_tokens
        seconds = record.model_seconds + record.check_seconds
        line = (
            f"- {when} · `{record.model}` · **{record.verdict}** (attempt {record.attempt}, {record.mode})"
            f" · {tokens} tokens · {seconds:.1f} s"
        )
        error = record.first_error_line.replace("`", "'")
        if error and record.verdict != "passed":
            line += f"  \n  `{error}`"
        lines.append(line)
    return "\n".join(lines)
