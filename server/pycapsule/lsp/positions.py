"""Character offsets in a text <-> LSP positions in the negotiated encoding (UTF-16 by default).

LSP line ends are only "\\n", "\\r\\n" and "\\r" (str.splitlines knows more, e.g. form feed), so lines
are indexed here rather than through pygls' `TextDocument.lines`.
"""

from __future__ import annotations

import bisect
import re

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

_LINE_END = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Line starts of one text, for offset <-> position conversion in O(log lines)."""

    def __init__(self, text: str, codec: PositionCodec | None = None) -> None:
        self.text = text
        self.codec = codec or PositionCodec()
        self.starts = [0, *(match.end() for match in _LINE_END.finditer(text))]

    def line_of(self, offset: int) -> int:
        """0-based line of a character offset."""
        return bisect.bisect_right(self.starts, offset) - 1

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = self.line_of(offset)
        units = self.codec.client_num_units(self.text[self.starts[line] : offset])
        return types.Position(line=line, character=units)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def offset(self, position: types.Position) -> int:
        """The character offset of a client position, clamped to the text (and to the line's end)."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] if position.line + 1 < len(self.starts) else len(self.text)
        line_text = _LINE_END.sub("", self.text[start:end])
        units = 0
        for index, char in enumerate(line_text):
            if units >= position.character:
                return start + index
            units += self.codec.impl.code_units_for_char(char)
        return start + len(line_text)

    def line_text(self, line0: int) -> str:
        """One 0-based line without its line end ('' past the end)."""
        if not 0 <= line0 < len(self.starts):
            return ""
        end = self.starts[line0 + 1] if line0 + 1 < len(self.starts) else len(self.text)
        return _LINE_END.sub("", self.text[self.starts[line0] : end])

    def line_range(self, line0: int) -> types.Range:
        """The whole of one 0-based line, without its line end."""
        line0 = max(0, min(line0, len(self.starts) - 1))
        start = self.starts[line0]
        end = self.starts[line0 + 1] if line0 + 1 < len(self.starts) else len(self.text)
        text = self.text[start:end]
        stripped = _LINE_END.sub("", text)
        indent = len(stripped) - len(stripped.lstrip())
        return self.range(start + indent, start + len(stripped))


def lines_text(index: LineIndex, first_line: int, end_line: int) -> str:
    """The text of 1-based lines first_line..end_line (a function's, from its first decorator)."""
    starts = index.starts
    start = starts[min(max(first_line - 1, 0), len(starts) - 1)]
    end = starts[end_line] if end_line < len(starts) else len(index.text)
    return index.text[start:end]
