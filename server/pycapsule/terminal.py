"""Text that reaches a terminal: what a job printed, what the model wrote and what a cloned file holds
are untrusted, and a terminal obeys escape sequences (they can clear the screen, retitle the window,
write the clipboard) and shows bidirectional overrides as reordered text. `terminal_safe` shows such
characters as Python escapes instead; tabs, newlines and CRLF line ends stay as they are. Lone
surrogates (a file name decoded with surrogateescape, printed by a doctest) are shown as escapes too: no
encoding can write them, so a strict stdout would fail on them and a lenient one would write bytes that
are not text."""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\r(?!\n)"
)


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


def terminal_safe(text: str) -> str:
    """`text` with every control character (but tab and line ends) and lone surrogate written as an
    escape, e.g. \\x1b, \\udce9."""
    return _UNSAFE.sub(_escaped, text)
