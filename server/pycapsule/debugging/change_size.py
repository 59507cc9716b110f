"""How much of a function's body a repair changed, by lines (a minimal repair changes few)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

MOST = 0.5
"""A repair that changes more than this share of the body's lines rewrote it."""


@dataclass(frozen=True)
class ChangeSize:
    changed: int
    """Lines of the old body replaced or removed, plus lines added beyond those."""
    lines: int
    """Lines of the old body (blank ones left out)."""

    @property
    def rewrote(self) -> bool:
        return self.changed > MOST * max(self.lines, 1)

    def describe(self) -> str:
        """'changed 1 of 10 body lines' or 'rewrote the body (9 of 10 lines changed)'."""
        if self.rewrote:
            return f"rewrote most of the body ({self.changed} of {self.lines} lines changed)"
        return f"changed {self.changed} of {self.lines} body lines"


def change_size(old_body: str, new_body: str) -> ChangeSize:
    old = [line.strip() for line in old_body.splitlines() if line.strip()]
    new = [line.strip() for line in new_body.splitlines() if line.strip()]
    changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
    return ChangeSize(changed, len(old))
