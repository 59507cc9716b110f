"""What a run found of its passing result's strength (`pycapsule.strength`: how many of the body's small
changes its examples and tests catch, the changes that still pass, examples that would catch them), kept in
memory per document and function with the function's text as the run left it, for as long as that text is
unchanged: hover shows the surviving changes and the suggested examples, the "Add example" code actions write
those examples into the docstring (features/actions.py), and a result the run called passed_loosely (below
the `min_caught` setting) gets an Information diagnostic on the function's name (diagnostics.py publishes it
with the doctest diagnostics). A result all of whose changes were caught leaves nothing.

Any change to the function's text ends it: the user's edit, an added example, a later run's edit. A change
above the function only moves it (its survivors' lines are told relative to the function). `Strengths` owns
these entries; they live on the event loop's thread, like the requests that read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from pycapsule.lsp import wording
from pycapsule.lsp.documents import CapsuleOutline, ParsedDocument
from pycapsule.lsp.positions import lines_text
from pycapsule.lsp.protocol import DIAGNOSTIC_SOURCE, LOOSE_CODE

if TYPE_CHECKING:  # the check itself (the sandbox's jobs) is the engine's process's, not this one's
    from pycapsule.strength.check import Strength

KEPT = 200
"""Entries kept at most (the oldest forgotten first)."""


@dataclass(frozen=True)
class Measured:
    """One function's passing body and what its examples and tests let pass, as the run left it."""

    qualname: str
    name: str
    strength: Strength
    text: str
    """The function's lines, first decorator to last body line, in the module the run produced."""
    first_line: int
    """1-based, where those lines began there (the survivors' lines are that module's)."""
    loosely: bool
    """The run ended passed_loosely: they catch less than `min_caught` of the changes (its diagnostic)."""

    def survivors_text(self, first_line: int) -> str:
        """'line 8: `days > 20` -> `days >= 20`; ...', at the function's lines now (from `first_line`)."""
        return self.strength.survivors_text(shift=first_line - self.first_line)

    def message(self, first_line: int) -> str:
        """The diagnostic's text: what the examples and tests miss, with the first change they let pass."""
        survivors = self.strength.survivors
        first = survivors[0].text(shift=first_line - self.first_line) if survivors else None
        return wording.loosely_pinned(self.name, self.strength, first)


class Strengths:
    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], Measured] = {}

    def keep(self, uri: str, measured: Measured) -> None:
        self._kept.pop((uri, measured.qualname), None)
        self._kept[(uri, measured.qualname)] = measured
        while len(self._kept) > KEPT:
            del self._kept[next(iter(self._kept))]

    def forget(self, uri: str, qualname: str | None = None) -> bool:
        """Forget the document's entries (one function's when `qualname`); whether there was one."""
        keys = [key for key in self._kept if key[0] == uri and qualname in (None, key[1])]
        for key in keys:
            del self._kept[key]
        return bool(keys)

    def diagnosed(self, uri: str) -> bool:
        """The document has a loosely pinned function (whose diagnostic follows its edits)."""
        return any(key[0] == uri and measured.loosely for key, measured in self._kept.items())

    def current(self, document: ParsedDocument, function: CapsuleOutline) -> Measured | None:
        """The function's entry while its text is the one the run left; cheap (one slice compared), for a code
        action on every cursor move. Works on a partial parse (`Documents.near`)."""
        measured = self._kept.get((document.uri, function.qualname))
        if measured is None:
            return None
        text = lines_text(document.index, function.first_line, function.end_line)
        return measured if text == measured.text else None

    def diagnostics(self, document: ParsedDocument) -> list[types.Diagnostic]:
        """The Information diagnostics of the document's loosely pinned functions, on each one's name where it
        is now; an entry whose function changed or is gone is forgotten. `document` is a whole parse; one with
        a syntax error places nothing and forgets nothing (the user is in the middle of typing)."""
        if document.syntax_error is not None:
            return []
        found = []
        for (uri, qualname), measured in list(self._kept.items()):
            if uri != document.uri:
                continue
            function = document.outline_of(qualname)
            if function is None or self.current(document, function) is None:
                del self._kept[(uri, qualname)]
                continue
            if not measured.loosely:
                continue
            start = document.index.starts[function.name_line] + function.name_column
            found.append(types.Diagnostic(
                range=document.index.range(start, start + len(function.name)),
                message=measured.message(function.first_line),
                severity=types.DiagnosticSeverity.Information,
                source=DIAGNOSTIC_SOURCE,
                code=LOOSE_CODE,
                data={"qualname": qualname},
            ))
        return found
