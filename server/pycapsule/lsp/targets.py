"""The function a run command names, found in the server's own outline, so that the command answers with the
run's id at once (issue 67; docs/server.md, "The start command's own answer") while the engine's process
parses the whole module in the background.

The outline is the document's whole parse when the server holds one of the command's text
(`Documents.current`), else only the definitions around the target, each parsed on its own
(`documents.local_outline`): the top-level definition holding the command's line, or each one with a
`def` of the name the command gives. Both cost milliseconds where the whole module's parse costs
hundreds.

What the outline cannot tell cheaply (no such function, a line outside any definition it can isolate, a
module whose whole parse has a syntax error) is left to the engine's process: its parse of the whole
module answers the command then, as it words those refusals. What the outline finds may still be refused
there (the module does not parse elsewhere; what looked like a function is inside a string; its capsule
cannot be built): the run then ends with that sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pycapsule.lsp.documents import CapsuleOutline, Documents, innermost, line_ends, local_outline
from pycapsule.lsp.host_messages import Mode, Refusal, has_a_body


def find_target(
    documents: Documents, uri: str, text: str, qualname: str | None, line: int | None, mode: Mode
) -> CapsuleOutline | Refusal | None:
    """The function named by `qualname`, else the innermost one holding the 0-based `line`, as the server's
    outline has it; a refusal the outline decides (generate on a function that has a body); None when the
    outline cannot tell."""
    function = _outlined(documents, uri, text, qualname, line or 0)
    if function is not None and mode in ("generate", "read_ahead") and not function.is_stub:
        return has_a_body(function.name)
    return function


def _outlined(
    documents: Documents, uri: str, text: str, qualname: str | None, line: int
) -> CapsuleOutline | None:
    parsed = documents.current(uri, text)
    if parsed is not None:
        if parsed.syntax_error is not None:
            return None
        return parsed.outline_of(qualname) if qualname is not None else parsed.outline_at_line(line)
    if qualname is None:
        return innermost(local_outline(text, line) or (), line)
    for def_line in _def_lines(text, qualname):
        found = next((f for f in local_outline(text, def_line) or () if f.qualname == qualname), None)
        if found is not None:
            return found
    return None


_DEF_PREFIX = re.compile(r"[ \t]*(?:async[ \t]+)?")


def _def_lines(text: str, qualname: str) -> Iterator[int]:
    """The 0-based lines that start a `def` of the qualname's last name, in the file's order."""
    name = re.escape(qualname.rpartition(".")[2])
    for match in re.finditer(rf"def[ \t]+{name}\b", text):
        line_start = max(text.rfind("\n", 0, match.start()), text.rfind("\r", 0, match.start())) + 1
        if _DEF_PREFIX.fullmatch(text, line_start, match.start()):
            yield line_ends(text, 0, line_start)
