"""Hover on a function's name: its attempt history (attempts.py), newest first; nothing when
there is none. Reads one indexed sqlite query, so it stays well inside a hover's latency budget.
Above it, for a function whose last run's result is unchanged since and has changes its examples and tests let
pass (strength.py): those changes, and the examples that would catch them, as doctest lines.

Buffers without a file (untitled) have no key in the store: their hover shows this session's runs
on that very buffer only. The text is Markdown, or plain text for clients that cannot render it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.history import AttemptRecord
from pycapsule.lsp import wording
from pycapsule.lsp.markup import code_block, code_span, markdown_text, one_line
from pycapsule.lsp.services import Services
from pycapsule.lsp.strength import Measured


def register(server: LanguageServer, services: Services) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        try:
            document = services.documents.near(params.text_document.uri, params.position.line)
        except (OSError, UnicodeDecodeError):  # not open and not readable on disk
            return None
        position = params.position
        column = (
            document.index.offset(position)
            - document.index.starts[min(position.line, len(document.index.starts) - 1)]
        )
        capsule = document.outline_named_at(position.line, column)
        if capsule is None:
            return None
        records = services.attempts.newest(document.uri, document.path, capsule.qualname)
        measured = services.strengths.current(document, capsule)
        if not records and measured is None:
            return None
        start = document.index.starts[capsule.name_line] + capsule.name_column
        markdown = _wants_markdown(server)
        kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
        text = render(capsule.name, records, markdown=markdown) if records else ""
        if measured is not None:
            found = render_strength(measured, capsule.first_line, markdown=markdown)
            text = f"{found}\n\n{text}" if text else found
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=text),
            range=document.index.range(start, start + len(capsule.name)),
        )


def _wants_markdown(server: LanguageServer) -> bool:
    document = server.client_capabilities.text_document
    hover = document.hover if document else None
    formats = hover.content_format if hover else None
    # No preference stated: Markdown, as before LSP 3.0 clients; else only when listed.
    return formats is None or types.MarkupKind.Markdown in formats


def render(name: str, records: list[AttemptRecord], *, markdown: bool = True) -> str:
    """The history as Markdown (every stored text in a code span or escaped: a model's name, an error line, a
    test file's name or an editor's refusal could hold backticks or a link) or as plain text.

    Each attempt is one line; under it, for a run's result, why its edit was not applied (when it was not) and
    what verified it, and for a failure the first line of its error:

        - 2025-06-01 10:00:00 · `fake-coder` · **passed, not applied** (attempt 2, fix) · 310 tokens · 1.2 s
          the function (lines 3-9) changed while the run was going on
          verified by 1 example + 2 tests (tests/test_core.py; 4 of 4 body lines run)
    """
    marks = _Marks(markdown)
    lines = [wording.history_title(name, marks), ""]
    for record in records:
        line = wording.history_entry(record, marks)
        for text in wording.history_notes(record, marks):
            line += ("  \n  " if markdown else "\n  ") + text  # "  \n": a line break
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class _Marks:
    """`wording.Marks`: every stored text in a code span or escaped (Markdown), or on one line (plain)."""

    markdown: bool

    def strong(self, text: str) -> str:
        return f"**{markdown_text(text)}**" if self.markdown else text

    def code(self, text: str) -> str:
        return code_span(text) if self.markdown else one_line(text)

    def prose(self, text: str) -> str:
        return markdown_text(text) if self.markdown else one_line(text)


def render_strength(measured: Measured, first_line: int, *, markdown: bool = True) -> str:
    """What the last run found of the body's strength (the function starting at `first_line` now): the
    counts, the changes that still pass (escaped: they quote the code) and the suggested examples as doctest
    lines, each with what this body shows, for the user to confirm (the code actions add them)::

        **pycapsule: changes of the body its examples and tests do not catch**: they catch 13 of 25 small
        changes; still passing: line 7: `if days > 20:` -> removed; ...

        Examples that would catch them (what this body shows; check before adding):

        ```python
        >>> late_fee(30)
        10.0
        ```
    """
    strength = measured.strength
    said = wording.strength_found(strength, measured.survivors_text(first_line))
    heading = wording.strength_heading(strength, measured.loosely)
    if markdown:
        parts = [f"**{markdown_text(heading)}**: {markdown_text(said)}"]
    else:
        parts = [f"{heading}: {one_line(said)}"]
    if strength.suggested:
        parts.append(wording.SUGGESTED_EXAMPLES)
        lines = "".join(example.doctest() for example in strength.suggested)
        parts.append(code_block(lines, "python") if markdown else _indented(lines))
    return "\n\n".join(parts)


def _indented(lines: str) -> str:
    return "\n".join(f"    {line}" for line in lines.rstrip("\n").split("\n"))
