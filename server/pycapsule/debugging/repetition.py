"""Spotting an answer that has fallen into a loop, so the model call can end early.

Small greedy models sometimes repeat a block of lines until the token limit. Two kinds are ended:
- the same lines verbatim (the module's imports, one statement): `MIN_COPIES` copies in a row, `MIN_LINES`
  lines in all; on the real-code benchmark 8 of 146 answers of the 0.5B model did, and took 29 % of its
  generation time;
- lines of the same *shape*, their names, strings and numbers aside (`if value == 1: return "one"`,
  `if value == 2: ...`; `if n % 16 == 0:`, `if n % 32 == 0:` ...), keywords and layout kept: the tail
  of the answer one block of shapes repeated `SHAPE_LINES` lines in all. A block of literals only (a table
  of numbers, a docstring's data) needs `DATA_LINES`: real code holds long tables.

The thresholds were chosen on every answer in data/records (`python3 -m measurements answer_ends`):
the longest same-shaped run among answers that passed their examples is 16 lines (four divisibility
checks), of data 49 lines (a DataFrame the answer copied from its docstring); both thresholds are twice
that, so no recorded answer that passed is cut.
"""

from __future__ import annotations

import keyword
import re

MIN_COPIES = 4
MIN_LINES = 16
SHAPE_LINES = 32
DATA_LINES = 100
LONGEST_BLOCK = 24
"""Blocks of more lines than this are not looked for: the check stays cheap as the answer grows."""

_STRING = re.compile(r"""(?:\b[rbuf]{1,2})?("|')(?:\\.|(?!\1).)*\1""", re.IGNORECASE)
_NUMBER = re.compile(r"\b\d[\d_]*(?:\.\d*)?(?:e[+-]?\d+)?j?\b|\.\d+\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_SPACES = re.compile(r"(?<=\S)[ \t]+")
_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}
_LETTER = re.compile(r"[A-Za-z]")


def line_shape(line: str) -> str:
    """A line with its strings, numbers and names (not keywords) replaced by placeholders, inner runs of
    spaces by one: `if value == 2: return "two"` and `if count == 30: return 'many'` have one shape."""
    shape = _NUMBER.sub("0", _STRING.sub("$", line.rstrip()))
    shape = _NAME.sub(lambda match: match[0] if match[0] in _KEYWORDS else "_", shape)
    return _SPACES.sub(" ", shape)


class RepetitionWatch:
    """Fed the streamed pieces of one answer; `looping` turns true once the answer's tail is a loop."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._shapes: list[str] = []
        self._partial = ""
        self.looping = False

    def feed(self, piece: str) -> bool:
        """Adds a streamed piece; true when the answer now ends in a loop."""
        if self.looping:
            return True
        *complete, self._partial = (self._partial + piece).split("\n")
        for line in complete:
            self.add_line(line)
            if self.looping:
                break
        return self.looping

    def add_line(self, line: str) -> bool:
        """Adds one whole line (no newline); true when the answer now ends in a loop."""
        self._lines.append(line.rstrip())
        self._shapes.append(line_shape(line))
        self.looping = self.looping or ends_in_loop(self._lines) or ends_in_same_shape_loop(self._shapes)
        return self.looping


def _periodic_tail(lines: list[str], size: int, span: int) -> bool:
    """Whether the last `span` of `lines` repeat with period `size` (each line equals the one `size` on)."""
    count = len(lines)
    return all(lines[index] == lines[index + size] for index in range(count - span, count - size))


def ends_in_loop(lines: list[str]) -> bool:
    """True when `lines` ends with one block of (non-blank) lines repeated back to back, long enough."""
    if len(lines) < MIN_LINES or not lines[-1].strip():
        return False
    for size in range(1, LONGEST_BLOCK + 1):
        copies = max(MIN_COPIES, -(-MIN_LINES // size))
        span = size * copies
        if span > len(lines):
            break
        block = lines[-size:]
        if all(lines[-span + i] == block[i % size] for i in range(span)):
            return True
    return False


def ends_in_same_shape_loop(shapes: list[str]) -> bool:
    """True when the line shapes (`line_shape`) end with one block of shapes repeated, `SHAPE_LINES` lines
    in all (`DATA_LINES` for a block of literals only) and at least `MIN_COPIES` copies."""
    if len(shapes) < SHAPE_LINES or not shapes[-1].strip():
        return False
    for size in range(1, min(LONGEST_BLOCK, len(shapes) // MIN_COPIES) + 1):
        block = shapes[-size:]
        data = not any(_LETTER.search(shape) for shape in block)
        needed = max(DATA_LINES if data else SHAPE_LINES, size * MIN_COPIES)
        if needed <= len(shapes) and _periodic_tail(shapes, size, needed):
            return True
    return False
