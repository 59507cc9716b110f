"""`PATH[::QUALNAME]` on the command line, shared by `generate` and `check`: the file, read and parsed,
with every way that can fail as one `CommandError` (a usage error, or a syntax error in the file)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pycapsule import capsule
from pycapsule.capsule import CapsuleError, SourceFile, nul_byte_line, read_source_file
from pycapsule.commands import wording
from pycapsule.commands.output import CommandError, UsageError
from pycapsule.exit_codes import ExitCode
from pycapsule.parsing import parse_source

__all__ = ["MAX_SOURCE_BYTES", "Target", "UsageError", "no_such_function", "parse_python", "parse_target",
           "read_target"]

MAX_SOURCE_BYTES = 16 << 20
"""Larger files are refused in one sentence (reading, parsing and sending them would take minutes)."""


@dataclass(frozen=True)
class Target:
    path: Path
    qualname: str | None


@dataclass(frozen=True)
class ReadTarget:
    target: Target
    data: bytes
    """The bytes as read: a write later goes ahead only if the file still holds them."""
    source: SourceFile


def parse_target(text: str, command: str) -> Target:
    path_text, _, qualname = text.partition("::")
    path = Path(path_text)
    if not path_text:
        raise UsageError(wording.no_file_given(command))
    if not path.is_file():
        raise UsageError(wording.not_a_file(path_text))
    try:
        size = path.stat().st_size
    except OSError as error:
        raise UsageError(wording.cannot_read(path_text, error)) from None
    if size > MAX_SOURCE_BYTES:
        raise UsageError(wording.too_large(path_text, size, MAX_SOURCE_BYTES))
    return Target(path, qualname.strip() or None)


def read_target(text: str, command: str) -> ReadTarget:
    """The target's file read, decoded and parsed; raises CommandError."""
    target = parse_target(text, command)
    try:
        data = target.path.read_bytes()
    except OSError as error:
        raise UsageError(wording.cannot_read(target.path, error)) from None
    try:
        source = read_source_file(target.path, data)
    except CapsuleError as error:  # not Python text at all: the file given is not one the command can use
        raise UsageError(error.message.rstrip(".")) from None
    parse_python(source.text, target.path)
    return ReadTarget(target, data, source)


def no_such_function(path: Path, qualname: str, known: Iterable[str]) -> UsageError:
    """`PATH::QUALNAME` names nothing in the file: `capsule.no_such_function`'s sentence, a usage error."""
    return UsageError(capsule.no_such_function(qualname, path, known))


def parse_python(source: str, path: Path) -> ast.Module:
    """ast.parse, with every way a file can fail to parse as one syntax-error CommandError naming a line."""
    line = nul_byte_line(source)
    if line is not None:
        raise _syntax_error(path, line, None, wording.NUL_BYTE)
    try:
        return parse_source(source, str(path))
    except SyntaxError as error:
        raise _syntax_error(path, error.lineno or 1, error.offset, error.msg) from None
    except (ValueError, RecursionError, MemoryError) as error:  # e.g. nesting deeper than the parser goes
        raise _syntax_error(path, 1, None, wording.cannot_parse(error)) from None


def _syntax_error(path: Path, line: int, column: int | None, message: str) -> CommandError:
    said = wording.syntax_error(path, line, column, message)
    return CommandError(said, kind="syntax", code=ExitCode.FAILED, line=line)
