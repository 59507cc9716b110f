"""Line-level facts about Python source that the syntax tree does not carry, from `tokenize`.

Re-indenting code safely needs two of them: which lines are inside a multi-line string (their
text is the string's value and must not move) and which lines continue a logical line inside
brackets or after a backslash (their indentation is free-form).
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

_NON_CODE = {
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.COMMENT,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class LineKinds:
    inside_string: frozenset[int]
    """1-based lines that begin inside a multi-line string literal."""
    continuation: frozenset[int]
    """1-based lines that continue a logical line started on an earlier line."""


def line_kinds(code: str) -> LineKinds:
    """Classify the lines of `code` (which must tokenize; callers have parsed it already)."""
    inside: set[int] = set()
    continuation: set[int] = set()
    logical_start: int | None = None
    fstring_starts: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind = token.type
            first_row, last_row = token.start[0], token.end[0]
            if kind == tokenize.STRING and last_row > first_row:
                inside.update(range(first_row + 1, last_row + 1))
            elif kind == _FSTRING_START:
                fstring_starts.append(first_row)
            elif kind == _FSTRING_END and fstring_starts:
                inside.update(range(fstring_starts.pop() + 1, last_row + 1))
            if kind == tokenize.NEWLINE:
                if logical_start is not None:
                    continuation.update(range(logical_start + 1, first_row + 1))
                logical_start = None
            elif kind not in _NON_CODE and logical_start is None:
                logical_start = first_row
    except (tokenize.TokenError, SyntaxError):
        pass
    return LineKinds(frozenset(inside), frozenset(continuation - inside))


def leading_whitespace(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t\f"))]


def dedent_code(code: str) -> str:
    """Remove the indentation all non-blank lines share, leaving whitespace-only lines untouched.

    Unlike textwrap.dedent, a whitespace-only line inside a string literal keeps its spaces.
    """
    lines = code.split("\n")
    prefixes = [leading_whitespace(line) for line in lines if line.strip()]
    if not prefixes:
        return code
    common = prefixes[0]
    for prefix in prefixes[1:]:
        while not prefix.startswith(common):
            common = common[:-1]
    if not common:
        return code
    return "\n".join(line.removeprefix(common) for line in lines)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def reindent(
    lines: list[str],
    first_line_number: int,
    kinds: LineKinds,
    source_indent: str,
    source_unit: str,
    target_indent: str,
    target_unit: str,
) -> list[str]:
    """Move a block of statement lines from one indentation style to another.

    Lines inside multi-line strings stay verbatim; statement lines get their nesting converted
    level by level (4 spaces -> a tab, ...); continuation lines keep their relative whitespace.
    """
    result = []
    for index, line in enumerate(lines):
        number = first_line_number + index
        if number in kinds.inside_string:
            result.append(line)
            continue
        if not line.strip():
            result.append("")
            continue
        whitespace = leading_whitespace(line)
        relative = whitespace[len(source_indent) :] if whitespace.startswith(source_indent) else ""
        if number not in kinds.continuation and source_unit and source_unit != target_unit:
            levels, rest = divmod(len(relative), len(source_unit))
            if not rest and relative == source_unit * levels:
                relative = target_unit * levels
        result.append(target_indent + relative + line[len(whitespace) :])
    return result
