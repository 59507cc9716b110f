"""Code actions. Listing them is cheap (no model, no sandbox: a cached parse of the document);
each carries only a command reference, and the work starts when the user picks one."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from pycapsule.lsp.diagnostics import SOURCE
from pycapsule.lsp.documents import FunctionOutline, ParsedDocument
from pycapsule.lsp.server import PycapsuleServer

GENERATE_TITLE = "Generate & self-debug"
GENERATE_KIND = types.CodeActionKind.RefactorRewrite
FIX_KIND = types.CodeActionKind.QuickFix

CMD_GENERATE = "pycapsule.generate"
CMD_SELF_DEBUG = "pycapsule.selfDebug"
CMD_CANCEL = "pycapsule.cancel"


def register(server: PycapsuleServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[GENERATE_KIND, FIX_KIND], resolve_provider=False),
    )
    def code_action(ls: PycapsuleServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        try:
            document = ls.parsed_near(params.text_document.uri, params.range.start.line)
        except (OSError, UnicodeDecodeError):  # not open and not readable on disk: nothing to offer
            return None
        if document.syntax_error is not None:
            return None
        actions = [*_generate_actions(ls, document, params), *_fix_actions(ls, document, params)]
        only = params.context.only
        if only:
            actions = [a for a in actions if any(str(a.kind).startswith(str(kind)) for kind in only)]
        return actions or None


def target_arguments(document: ParsedDocument, capsule: FunctionOutline) -> list[Any]:
    return [{"uri": document.uri, "qualname": capsule.qualname, "version": document.version}]


def _tags(ls: PycapsuleServer) -> list[types.CodeActionTag] | None:
    document = ls.client_capabilities.text_document
    code_action = document.code_action if document else None
    support = code_action.tag_support if code_action else None
    if support and types.CodeActionTag.LlmGenerated in support.value_set:
        return [types.CodeActionTag.LlmGenerated]
    return None


def _generate_actions(
    ls: PycapsuleServer, document: ParsedDocument, params: types.CodeActionParams
) -> list[types.CodeAction]:
    capsule = document.function_at_line(params.range.start.line)
    if capsule is None or not capsule.is_stub:
        return []
    if ls.runs.running(document.uri, capsule.qualname):
        title = f"Cancel generating `{capsule.name}`"
        command = types.Command(
            title=title, command=CMD_CANCEL, arguments=target_arguments(document, capsule)
        )
        return [types.CodeAction(title=title, kind=GENERATE_KIND, command=command)]
    command = types.Command(
        title=GENERATE_TITLE, command=CMD_GENERATE, arguments=target_arguments(document, capsule)
    )
    return [types.CodeAction(title=GENERATE_TITLE, kind=GENERATE_KIND, command=command, tags=_tags(ls))]


def _fix_actions(
    ls: PycapsuleServer, document: ParsedDocument, params: types.CodeActionParams
) -> list[types.CodeAction]:
    ours = [d for d in params.context.diagnostics if d.source == SOURCE]
    by_function: dict[str, list[types.Diagnostic]] = {}
    for diagnostic in ours:
        capsule = _diagnosed_capsule(document, diagnostic)
        if capsule is not None and not capsule.is_stub:
            by_function.setdefault(capsule.qualname, []).append(diagnostic)
    actions = []
    for qualname, diagnostics in by_function.items():
        capsule = document.function(qualname)
        if capsule is None or ls.runs.running(document.uri, qualname):
            continue
        title = f"Self-debug `{capsule.name}` (doctests failing)"
        command = types.Command(
            title=title, command=CMD_SELF_DEBUG, arguments=target_arguments(document, capsule)
        )
        actions.append(
            types.CodeAction(
                title=title,
                kind=FIX_KIND,
                diagnostics=diagnostics,
                command=command,
                is_preferred=True,
                tags=_tags(ls),
            )
        )
    return actions


def _diagnosed_capsule(document: ParsedDocument, diagnostic: types.Diagnostic) -> FunctionOutline | None:
    data = diagnostic.data
    if isinstance(data, dict) and isinstance(data.get("qualname"), str):
        found = document.function(data["qualname"])
        if found is not None:
            return found
    # Some clients drop `data`; the diagnostic's line still says whose doctest failed.
    return document.function_at_line(diagnostic.range.start.line)
