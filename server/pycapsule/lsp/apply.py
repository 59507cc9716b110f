"""The end of a run: its edits as one versioned `TextDocumentEdit` through `workspace/applyEdit`.

The edits were computed against the text the run started from. They are moved onto the text the
editor holds now (see rebase.py) when the user only typed elsewhere; when the user changed the
function itself the result is refused and their text stays as it is. The editor itself refuses
an edit whose version is stale, so a keystroke between our check and its arrival is safe too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from pycapsule.capsule import Capsule
from pycapsule.lsp.documents import ParsedDocument
from pycapsule.lsp.positions import LineIndex
from pycapsule.lsp.rebase import Conflict, OffsetEdit, rebase

if TYPE_CHECKING:
    from pycapsule.lsp.server import PycapsuleServer

_TRIES = 3
"""A refused edit (the user typed while it was in flight) is rebased and offered again this often."""


async def apply_outcome(
    server: PycapsuleServer, started_from: ParsedDocument, capsule: Capsule, edits: Sequence[OffsetEdit]
) -> tuple[bool, str]:
    """(applied, message). Never changes text the user typed during the run."""
    reason = "the editor did not apply the edit"
    for _ in range(_TRIES):
        document = server.workspace.get_text_document(started_from.uri)
        current_text, version = document.source, document.version
        try:
            moved = rebase(started_from.text, current_text, edits, [(capsule.header_start, capsule.body_end)])
        except Conflict as exc:
            return False, (
                f"`{capsule.name}` was not changed: {exc}. "
                "Your text is untouched; run it again to regenerate."
            )
        index = LineIndex(current_text, server.workspace.position_codec)
        text_edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(range=index.range(edit.start, edit.end), new_text=edit.new_text) for edit in moved
        ]
        label = f"pycapsule: generate `{capsule.name}`"
        if _supports_document_changes(server):
            workspace_edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=started_from.uri, version=version
                        ),
                        edits=text_edits,
                    )
                ]
            )
        else:
            workspace_edit = types.WorkspaceEdit(changes={started_from.uri: list(text_edits)})  # type: ignore[arg-type]
        try:
            response = await server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=workspace_edit, label=label)
            )
        except Exception as exc:  # the editor answered with an error: nothing was applied
            return False, f"`{capsule.name}` was not changed: the editor refused the edit ({exc})."
        if response.applied:
            return True, "applied"
        reason = response.failure_reason or reason
        if server.workspace.get_text_document(started_from.uri).version == version:
            break  # refused for a reason other than a newer version: do not insist
    return False, f"`{capsule.name}` was not changed: {reason}."


def _supports_document_changes(server: PycapsuleServer) -> bool:
    workspace = server.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    # Resource operations only exist inside `documentChanges`, so a client that lists them (Neovim
    # does, without setting `documentChanges`) reads versioned document edits too.
    return bool(edit and (edit.document_changes or edit.resource_operations))
