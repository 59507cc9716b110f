"""pygls' documents with the LSP line rule: only "\\n", "\\r\\n" and "\\r" end a line.

pygls splits a document with `str.splitlines`, which also breaks at form feeds, vertical tabs and
Unicode separators, so an editor's incremental change below such a character landed on the wrong line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(_LINE.findall(self.source))


def use_lsp_lines(workspace: Workspace) -> None:
    """Make `workspace` create every document it opens as an `LspTextDocument`."""
    create = workspace._create_text_document

    def create_with_lsp_lines(*args: Any, **kwargs: Any) -> TextDocument:
        document = create(*args, **kwargs)
        document.__class__ = LspTextDocument
        return document

    workspace._create_text_document = create_with_lsp_lines  # type: ignore[method-assign]
