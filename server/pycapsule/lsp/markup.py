"""Untrusted text (a model's name, code, the sandbox's error text, file names) made inert where an editor
renders it. In Markdown (hover) it goes in a code span or as escaped text, so it can never open a link, an
image, HTML or a heading. Plain-text messages (window/showMessage, progress, a command's answer) are not
Markdown, but VS Code turns `[label](https:...|command:...|file:...)` in a notification into a link that
runs the command: `no_links` breaks that pattern."""

from __future__ import annotations

import re

_LINE_END = re.compile(r"\r\n|\r|\n")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
"""Every ASCII punctuation character: CommonMark lets a backslash escape each one."""
_BACKTICKS = re.compile(r"`+")
_LINK = re.compile(r"\]\(")


def one_line(text: str) -> str:
    """Line ends as spaces: a new line inside inline Markdown could start a heading, list or fence."""
    return _LINE_END.sub(" ", text)


def code_span(text: str) -> str:
    """`text` shown verbatim as inline code: fenced by a backtick run longer than any inside it, and padded
    with a space at each end when it starts or ends with a backtick or a space (CommonMark strips one)."""
    text = one_line(text)
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text[:1] in ("`", " ") or text[-1:] in ("`", " "):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def code_block(text: str, language: str = "") -> str:
    """`text` (lines) shown verbatim as a fenced code block: fenced by a backtick run longer than any inside
    it, so no line of it can end the block."""
    fence = "`" * max(3, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def markdown_text(text: str) -> str:
    """`text` shown as it is in Markdown prose: every punctuation character escaped, so nothing in it is
    emphasis, a link (bare URLs need `:` or `.` unescaped), an entity, HTML or a block."""
    return _PUNCTUATION.sub(r"\\\1", one_line(text))


def no_links(text: str) -> str:
    """A plain-text message with VS Code's notification links broken: `](` becomes `] (`."""
    return _LINK.sub("] (", text)
