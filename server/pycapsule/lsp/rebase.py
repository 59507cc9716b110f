"""Carry a run's edits from the text it started from onto the text the editor holds now.

A generation takes seconds to minutes, and the user keeps typing. Edits computed against the
old text are moved line by line onto the new text when everything they touch (and the guarded
region: the whole function) is unchanged; otherwise the result is a conflict and nothing is applied.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pycapsule.lsp import wording
from pycapsule.lsp.positions import LineIndex


class OffsetEdit(Protocol):
    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class MovedEdit:
    start: int
    end: int
    new_text: str


class Conflict(Exception):
    """The user changed text that the edits touch; the message says where."""


def _lines(index: LineIndex) -> list[str]:
    bounds = [*index.starts, len(index.text)]
    return [index.text[bounds[i] : bounds[i + 1]] for i in range(len(index.starts))]


class _LineMap:
    """Old line -> new line for every line inside an unchanged stretch (same block id = same stretch)."""

    def __init__(self, old: LineIndex, new: LineIndex) -> None:
        matcher = difflib.SequenceMatcher(None, _lines(old), _lines(new), autojunk=False)
        self.new_line: dict[int, tuple[int, int]] = {}
        for block, (i, j, size) in enumerate(matcher.get_matching_blocks()):
            for k in range(size):
                self.new_line[i + k] = (j + k, block)

    def moved_lines(self, first: int, last: int) -> int | None:
        """The new line of `first` when old lines first..last are all unchanged and still adjacent."""
        start = self.new_line.get(first)
        if start is None:
            return None
        for line in range(first + 1, last + 1):
            mapped = self.new_line.get(line)
            if mapped is None or mapped[1] != start[1]:
                return None
        return start[0]


def rebase(
    old_text: str,
    new_text: str,
    edits: Iterable[OffsetEdit],
    guarded: Sequence[tuple[int, int]] = (),
) -> list[MovedEdit]:
    """The edits moved onto `new_text`; Conflict when the user changed what they (or `guarded`) touch."""
    edits = [MovedEdit(edit.start, edit.end, edit.new_text) for edit in edits]
    if old_text == new_text:
        return edits
    old, new = LineIndex(old_text), LineIndex(new_text)
    line_map = _LineMap(old, new)

    def move(start: int, end: int, function: bool) -> int:
        first, last = old.line_of(start), old.line_of(max(start, end - 1))
        new_first = line_map.moved_lines(first, last)
        if new_first is None:
            raise Conflict(wording.changed_during_run(function, first + 1, last + 1))
        return new.starts[new_first] + (start - old.starts[first])

    for start, end in guarded:
        move(start, end, function=True)
    moved = []
    for edit in edits:
        new_start = move(edit.start, edit.end, function=False)
        moved.append(MovedEdit(new_start, new_start + (edit.end - edit.start), edit.new_text))
    return moved
