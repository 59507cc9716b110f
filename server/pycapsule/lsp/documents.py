"""The open documents as parsed capsules, parsed once per document version.

Code actions and hover are asked for on every cursor move; parsing a 3,000-line module each time
would blow their latency budget, so the capsules of the latest version of each document are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from pycapsule.capsule import Capsule, CapsuleError, read_capsules
from pycapsule.lsp.positions import LineIndex


@dataclass(frozen=True)
class ParsedDocument:
    uri: str
    version: int | None
    text: str
    path: Path | None
    capsules: tuple[Capsule, ...]
    syntax_error: CapsuleError | None
    index: LineIndex

    def capsule_at_line(self, line0: int) -> Capsule | None:
        """The innermost function whose lines (decorators to last body line) contain the 0-based line."""
        line = line0 + 1
        inside = [c for c in self.capsules if c.def_line <= line <= c.end_line]
        return max(inside, key=lambda c: c.def_line, default=None)

    def capsule_named_at(self, line0: int, character: int) -> Capsule | None:
        """The function whose name (in its `def` line) is under the position, for hover."""
        for capsule in self.capsules:
            name_line, name_column = name_position(capsule)
            if name_line == line0 and name_column <= character <= name_column + len(capsule.name):
                return capsule
        return None

    def by_qualname(self, qualname: str) -> Capsule | None:
        return next((c for c in self.capsules if c.qualname == qualname), None)


def name_position(capsule: Capsule) -> tuple[int, int]:
    """0-based line and column (in characters) of the function's name in its `def` line."""
    header_lines = capsule.header.splitlines()
    for number, text in enumerate(header_lines):
        stripped = text.lstrip()
        for keyword in ("async def ", "def "):
            if stripped.startswith(keyword):
                column = len(text) - len(stripped) + len(keyword)
                column = text.index(capsule.name, column)
                return capsule.def_line - 1 + number, column
    return capsule.def_line - 1, 0


def document_path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


class DocumentCache:
    def __init__(self) -> None:
        self._latest: dict[str, ParsedDocument] = {}

    def parse(self, document: TextDocument, codec: PositionCodec) -> ParsedDocument:
        text = document.source
        cached = self._latest.get(document.uri)
        if cached is not None and cached.version == document.version and cached.text == text:
            return cached
        parsed = parse_text(document.uri, document.version, text, codec)
        self._latest[document.uri] = parsed
        return parsed

    def forget(self, uri: str) -> None:
        self._latest.pop(uri, None)


def parse_text(uri: str, version: int | None, text: str, codec: PositionCodec) -> ParsedDocument:
    path = document_path(uri)
    try:
        capsules, error = tuple(read_capsules(text, path)), None
    except CapsuleError as exc:
        capsules, error = (), exc
    return ParsedDocument(uri, version, text, path, capsules, error, LineIndex(text, codec))
