"""The end of a run: its edits as one versioned `TextDocumentEdit` through `workspace/applyEdit`.

The edits were computed against the text the run started from. They are moved onto the text the
editor holds now (see rebase.py) when the user only typed elsewhere; when the user changed the
function itself the result is refused and their text stays as it is. The editor itself refuses
an edit whose version is stale, so a keystroke between our check and its arrival is safe too.

Editors are not trusted to answer as the protocol says:
- a refusal, whether `applied: false` or an error reply (eglot answers a stale version with an error),
  is rebased onto the editor's newest text and sent again, each time the editor reports newer text, for
  as long as the user keeps typing elsewhere (at most `_FOLLOW_SECONDS` after the first refusal, and
  `_OFFERS` times). An editor may report its text only when the user pauses (eglot: after 0.5 s idle, so
  never while the user types on): after a refusal that names a version (eglot's "require version 3, you
  have 5") the server waits for that text as long; after another it waits `_SETTLE_SECONDS`, then believes
  the refusal. If the user changed the function itself meanwhile, nothing is applied and the message says so;
- an answer that the edit was applied while the editor's next text still holds the function as the run found
  it counts as a refusal (Neovim 0.11 answers `applied: true` to an edit made for an older version than its
  buffer's, "newer than edits", and applies nothing: the user's last keystroke was not reported yet);
- an editor that applies the edit without answering (Vim's ALE, which also declares it cannot
  apply edits) is seen through its `didChange`; one that neither answers nor changes the text
  within `applyEditTimeout` seconds ends the run as "unconfirmed", with a message, not a hang.

A client that does not declare `workspace.applyEdit` is still sent the edit (ALE applies it anyway), but is
never asked twice; when it does not apply it (an error reply, `applied: false`, or neither an answer nor the
text within `applyEditTimeout`), the new code goes where the user can take it: in the message, the log and the
run's last status (`Applied.code`). Every other result that was not applied has its code in the log and that
status too.

With `diffPreview` on and a client that supports change annotations, the edit carries an
annotation that needs confirmation (VS Code shows its refactor preview first); the user then has
`_PREVIEW_SECONDS` to decide.

What became of the edit (`Applied.for_history`) is kept on the result's history row, so that hover never
calls a result that was not applied just "passed" (lsp/attempts.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from pycapsule.capsule import Capsule
from pycapsule.history import APPLIED, application
from pycapsule.lsp import wording
from pycapsule.lsp.changes import ChangeSignal
from pycapsule.lsp.positions import LineIndex
from pycapsule.lsp.protocol import PREVIEW_ANNOTATION
from pycapsule.lsp.rebase import Conflict, MovedEdit, OffsetEdit, rebase
from pycapsule.lsp.settings import EditorOptions
from pycapsule.lsp.status import log

_FOLLOW_SECONDS = 60.0
"""After the editor first refuses the edit, how long it may follow the editor's newer text at most."""
_OFFERS = 100
"""How often one result is offered at most (each time on newer text)."""
_SETTLE_SECONDS = 2.0
"""After a refusal that names no version, and no newer text known, how long to wait for the editor to report
its text (editors that answer so report it at once) before the refusal counts."""
_PREVIEW_SECONDS = 600.0
"""How long a user may look at the diff preview before the run ends as unconfirmed."""


@dataclass(frozen=True)
class Applied:
    state: Literal["applied", "refused", "unconfirmed"]
    message: str
    """For the user: one sentence."""
    reason: str = ""
    """Why it was not applied, or may not have been ('the function (lines 3-7) changed while the run was
    going on')."""
    code: str = ""
    """The new code, for the user to take, when it was not applied."""
    version: int | None = None
    """The document version the applied edit was made for (its text follows in the next `didChange`)."""

    @property
    def for_history(self) -> str:
        """What became of the result, as the history keeps it (`AttemptRecord.applied`)."""
        if self.state == "applied":
            return APPLIED
        return application("unconfirmed" if self.state == "unconfirmed" else "not applied", self.reason)


class StartedFrom(Protocol):
    """The document as the run saw it when it started."""

    @property
    def uri(self) -> str: ...

    @property
    def text(self) -> str: ...


async def apply_outcome(
    server: LanguageServer,
    changes: ChangeSignal,
    started_from: StartedFrom,
    capsule: Capsule,
    edits: Sequence[OffsetEdit],
    options: EditorOptions | None = None,
    label: str | None = None,
) -> Applied:
    """Never changes text the user typed during the run. `label`: what the edit is, when it is not a run's
    checked result (the closest try of a run that gave up)."""
    options = options or EditorOptions()
    uri = started_from.uri
    preview = options.diff_preview and _supports_annotations(server)
    wait_seconds = options.apply_edit_timeout
    if preview:
        wait_seconds = max(wait_seconds, _PREVIEW_SECONDS)
    declared = _declares_apply_edit(server)
    if not declared:
        log(server, wording.SENDING_ANYWAY)
    code = new_code(started_from.text, capsule, edits)
    loop = asyncio.get_running_loop()
    first_refusal: float | None = None
    offers = 0
    while True:
        document = server.workspace.get_text_document(uri)
        version = document.version
        try:
            answer, expected = _offer(server, document, started_from, capsule, edits, preview, label)
        except Conflict as exc:
            return _conflicting(capsule, exc, code)
        offers += 1
        if not await _answered_or_applied(server, changes, uri, answer, expected, wait_seconds):
            _let_go(answer)
            return _unanswered(capsule, code, wait_seconds, declared)
        outcome = await _answered(server, changes, started_from, capsule, answer, expected, version, code)
        if isinstance(outcome, Applied):
            return outcome
        reason = outcome
        if not declared:
            return _not_applicable(capsule, code)
        now = loop.time()
        first_refusal = first_refusal if first_refusal is not None else now
        following = now - first_refusal
        if offers >= _OFFERS or following >= _FOLLOW_SECONDS:
            reason = wording.offered(reason, offers, following)
            break
        if not await _newer_text(server, changes, uri, version, reason, following):
            break  # refused, and the editor reports no newer text: do not insist
    return Applied("refused", wording.not_changed(capsule.name, reason), reason, code)


def _offer(
    server: LanguageServer,
    document: TextDocument,
    started_from: StartedFrom,
    capsule: Capsule,
    edits: Sequence[OffsetEdit],
    preview: bool,
    label: str | None,
) -> tuple[asyncio.Future[types.ApplyWorkspaceEditResult], str]:
    """Send the edits, rebased onto `document` (the editor's text as the server holds it now): the editor's
    answer to come, and the text the edits make. Raises `Conflict` when the user changed the function."""
    current_text, version = document.source, document.version
    moved = rebase(started_from.text, current_text, edits, [(capsule.header_start, capsule.body_end)])
    expected = _applied_text(current_text, moved)
    params = types.ApplyWorkspaceEditParams(
        edit=_workspace_edit(server, started_from.uri, version, current_text, moved, capsule, preview, label),
        label=wording.edit_label(capsule.name, label),
    )
    return asyncio.ensure_future(server.workspace_apply_edit_async(params)), expected


async def _answered(
    server: LanguageServer,
    changes: ChangeSignal,
    started_from: StartedFrom,
    capsule: Capsule,
    answer: asyncio.Future[types.ApplyWorkspaceEditResult],
    expected: str,
    version: int | None,
    code: str,
) -> Applied | str:
    """What became of an edit the editor answered or applied (`expected` is its text then): applied, not
    applicable, or the reason it was refused."""
    uri = started_from.uri
    if not answer.done() or server.workspace.get_text_document(uri).source == expected:
        _let_go(answer)  # the new text arrived: the editor applied it, whatever it answers
        return Applied("applied", "applied", version=version)
    try:
        response = answer.result()
    except JsonRpcMethodNotFound:  # it does not know the request, whatever it declared
        return _not_applicable(capsule, code)
    except Exception as exc:  # an error reply: nothing was applied
        return wording.editor_refused(exc)
    if not response.applied:
        return response.failure_reason or wording.NOT_APPLIED
    if await _kept(server, changes, uri, version, started_from.text, capsule):
        return Applied("applied", "applied", version=version)
    return wording.APPLIED_BUT_MISSING


async def _newer_text(
    server: LanguageServer,
    changes: ChangeSignal,
    uri: str,
    version: int | None,
    reason: str,
    following: float,
) -> bool:
    """Whether the editor holds newer text than `version` to offer the edit on again, waiting for it when
    none is known yet: as long as the result may follow the text when the refusal named a version, else
    `_SETTLE_SECONDS`."""
    if server.workspace.get_text_document(uri).version != version:
        return True
    # An editor that refused a stale version may report the user's typing only once the user pauses (eglot).
    newer_exists = "version" in reason.lower()
    remaining = _FOLLOW_SECONDS - following
    return await changes.wait(uri, remaining if newer_exists else min(_SETTLE_SECONDS, remaining))


def _conflicting(capsule: Capsule, conflict: Conflict, code: str) -> Applied:
    """The user changed the function during the run: nothing is applied."""
    return Applied("refused", wording.changed_meanwhile(capsule.name, str(conflict)), str(conflict), code)


def _unanswered(capsule: Capsule, code: str, wait_seconds: float, declared: bool) -> Applied:
    """Neither an answer nor the edit's text within `wait_seconds`."""
    if not declared:
        return _not_applicable(capsule, code)
    silent = wording.silent(wait_seconds)
    return Applied("unconfirmed", wording.unconfirmed(capsule.name, silent), silent, code)


def _not_applicable(capsule: Capsule, code: str) -> Applied:
    """An editor that cannot apply edits did not apply this one: the code is the user's to take."""
    return Applied("refused", wording.take_the_code(capsule.name, code), wording.CANNOT_APPLY, code)


def new_code(text: str, capsule: Capsule, edits: Sequence[OffsetEdit]) -> str:
    """What the edits make of the function, after what they add above it (imports, helpers): for the user
    to copy when the editor did not apply them."""
    inside = sorted((e for e in edits if e.start >= capsule.body_start), key=lambda e: e.start, reverse=True)
    above = sorted((e for e in edits if e.start < capsule.body_start), key=lambda e: e.start)
    start = capsule.header_start
    function = text[start : capsule.body_end]
    for edit in inside:
        function = function[: edit.start - start] + edit.new_text + function[edit.end - start :]
    added = "".join(edit.new_text for edit in above).strip("\r\n")
    return f"{added}\n\n\n{function}" if added else function


def _let_go(answer: asyncio.Future[object]) -> None:
    """Stop waiting for the editor's answer without cancelling the request: pygls fails on an answer that
    arrives for a request cancelled on this side (an error box after a success), so it is read and dropped."""
    answer.add_done_callback(lambda done: done.cancelled() or done.exception())


async def _kept(
    server: LanguageServer,
    changes: ChangeSignal,
    uri: str,
    version: int | None,
    started_from: str,
    capsule: Capsule,
) -> bool:
    """After an answer that the edit was applied, whether the editor's text has it: not when the next text it
    reports still holds the function as the run found it (Neovim 0.11 answers `applied: true` to an edit made
    for an older version than its buffer's and applies nothing). Without newer text within `_SETTLE_SECONDS`
    the answer is believed."""
    documents = server.workspace
    if documents.get_text_document(uri).version == version and not await changes.wait(uri, _SETTLE_SECONDS):
        return True
    function = (capsule.header_start, capsule.body_end)
    try:
        rebase(started_from, documents.get_text_document(uri).source, [], [function])
    except Conflict:
        return True  # the function is no longer as the run found it: the edit is there
    return False


async def _answered_or_applied(
    server: LanguageServer,
    changes: ChangeSignal,
    uri: str,
    answer: asyncio.Future[object],
    expected: str,
    seconds: float,
) -> bool:
    """Wait for the editor's answer, or for its text to become `expected`; False after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not answer.done():
        if server.workspace.get_text_document(uri).source == expected:
            return True
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        change = asyncio.ensure_future(changes.next_change(uri).wait())
        try:
            await asyncio.wait({answer, change}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            change.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await change
    return True


def _applied_text(text: str, edits: Sequence[MovedEdit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new_text + text[edit.end :]
    return text


def _workspace_edit(
    server: LanguageServer,
    uri: str,
    version: int | None,
    text: str,
    moved: Sequence[MovedEdit],
    capsule: Capsule,
    preview: bool,
    label: str | None = None,
) -> types.WorkspaceEdit:
    index = LineIndex(text, server.workspace.position_codec)
    ranges = [(index.range(edit.start, edit.end), edit.new_text) for edit in moved]
    if preview:
        annotated: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.AnnotatedTextEdit(range=r, new_text=t, annotation_id=PREVIEW_ANNOTATION) for r, t in ranges
        ]
        return types.WorkspaceEdit(
            document_changes=[_document_edit(uri, version, annotated)],
            change_annotations={
                PREVIEW_ANNOTATION: types.ChangeAnnotation(
                    label=wording.preview_label(capsule.name, label),
                    needs_confirmation=True,
                    description=label or wording.PREVIEW_DESCRIPTION,
                )
            },
        )
    return plain_edit(server, uri, version, [types.TextEdit(range=r, new_text=t) for r, t in ranges])


def plain_edit(server: LanguageServer, uri: str, version: int | None,
               edits: Sequence[types.TextEdit]) -> types.WorkspaceEdit:
    """Edits of one document for `version`: a versioned `TextDocumentEdit` where the client reads
    `documentChanges`, else `changes` (which the client applies to whatever text it holds)."""
    plain: _Edits = list(edits)
    if _supports_document_changes(server):
        return types.WorkspaceEdit(document_changes=[_document_edit(uri, version, plain)])
    return types.WorkspaceEdit(changes={uri: list(edits)})


def replacement_edit(server: LanguageServer, uri: str, version: int | None, text: str,
                     new_text: str) -> types.WorkspaceEdit:
    """`text` (the document at `version`) made `new_text`, as one edit of the span between what they share
    at the start and at the end. An insertion is slid back to the start of its line where the text allows
    (whole lines inserted, not the end of one line and the start of the next)."""
    start = _shared(len(text), len(new_text), lambda n: text[:n] == new_text[:n])
    tail = _shared(len(text) - start, len(new_text) - start,
                   lambda n: text[len(text) - n:] == new_text[len(new_text) - n:])
    end, changed = len(text) - tail, new_text[start : len(new_text) - tail]
    while start == end and changed and start > 0 and text[start - 1] not in "\r\n" \
            and changed[-1] == text[start - 1]:
        start, end, changed = start - 1, end - 1, changed[-1] + changed[:-1]
    index = LineIndex(text, server.workspace.position_codec)
    return plain_edit(server, uri, version, [types.TextEdit(range=index.range(start, end), new_text=changed)])


def _shared(a: int, b: int, same: Callable[[int], bool]) -> int:
    """The longest length n <= a, b with `same(n)` (true up to some length, false beyond): a binary search of
    slices compared in C, not a loop over characters."""
    low, high = 0, min(a, b)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if same(middle) else (low, middle - 1)
    return low


_Edits = list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit]


def _document_edit(uri: str, version: int | None, edits: _Edits) -> types.TextDocumentEdit:
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits
    )


def _workspace_edit_capabilities(server: LanguageServer) -> types.WorkspaceEditClientCapabilities | None:
    workspace = server.client_capabilities.workspace
    return workspace.workspace_edit if workspace else None


def _declares_apply_edit(server: LanguageServer) -> bool:
    workspace = server.client_capabilities.workspace
    return bool(workspace and workspace.apply_edit)


def _supports_document_changes(server: LanguageServer) -> bool:
    edit = _workspace_edit_capabilities(server)
    # Resource operations only exist inside `documentChanges`, so a client that lists them (Neovim
    # does, without setting `documentChanges`) reads versioned document edits too.
    return bool(edit and (edit.document_changes or edit.resource_operations))


def _supports_annotations(server: LanguageServer) -> bool:
    edit = _workspace_edit_capabilities(server)
    return bool(edit and edit.change_annotation_support is not None and _supports_document_changes(server))
