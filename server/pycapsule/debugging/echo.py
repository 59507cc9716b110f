"""An answer that repeats the function's signature and docstring: the rest of them can be read, not written.

Small models start most answers by copying the function as the task shows it (on the realcode records, 724
of 851 answers repeat its def line; of those that repeat three lines of it, 85 % go on to the docstring's
end). Writing is the slow part of a model call (about 12 tokens/s for the 1.5B on 2 cores, against 65 for
reading), and a long docstring is most of a short answer. `EchoWatch` is fed the answer's code lines from the
function's def line on; once `ECHO_LINES` of them repeat the task's lines in order and what is left of the
docstring is `ECHO_MIN_CHARS` or more, it gives that rest, indented as the answer indents the function. The
model client then ends the request and asks the model to continue an answer that already holds it
(`fast_forward_echo`): the same answer as far as the model repeats the docstring, sooner.
"""

from __future__ import annotations

from pycapsule.debugging.source_text import leading_whitespace

ECHO_LINES = 3
"""Lines of the function's head (its def line first) an answer repeats before the rest is given to it."""
ECHO_MIN_CHARS = 80
"""The rest of the head worth a second request (about 20 tokens: a few seconds of writing)."""


def head_from_def(head: str) -> list[str]:
    """The lines of a function's head from its def line on (decorators left out: answers often drop them);
    [] when no line starts the def."""
    lines = head.rstrip().split("\n")
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "async def ")):
            return lines[index:]
    return []


class EchoWatch:
    """Fed an answer's lines from the one that repeats the def line; `rest` is set once the rest of the
    head should be given to the model instead of written by it."""

    def __init__(self, head_lines: list[str], def_line: str) -> None:
        """`def_line`: the answer's line that repeats `head_lines[0]` (its indentation is the answer's)."""
        self._head = head_lines
        self._shift = len(leading_whitespace(def_line)) - len(leading_whitespace(head_lines[0]))
        self._matched = 1
        self.done = len(head_lines) <= 1
        """Nothing more to look for: the answer left the head, repeated it whole, or `rest` was given."""
        self.rest: str | None = None
        """The head's lines after those repeated, as the answer would go on (each ending in a newline)."""

    def line(self, line: str) -> str | None:
        """The answer's next line; the rest of the head once it is time to give it."""
        if self.done:
            return None
        if line.strip() != self._head[self._matched].strip():
            self.done = True
            return None
        self._matched += 1
        remaining = self._head[self._matched:]
        if not remaining:
            self.done = True
            return None
        if self._matched >= ECHO_LINES and sum(len(item) for item in remaining) >= ECHO_MIN_CHARS:
            self.done = True
            self.rest = "".join(self._shifted(item) + "\n" for item in remaining)
        return self.rest

    def _shifted(self, line: str) -> str:
        if not line.strip():
            return ""
        if self._shift >= 0:
            return " " * self._shift + line
        cut = min(-self._shift, len(leading_whitespace(line)))
        return line[cut:]
