"""Code actions. Listing them is cheap (no model, no sandbox: a cached parse of the document);
each carries only a command reference, and the work starts when the user picks one.

- A stub offers "Generate & self-debug" (refactor.rewrite); a function whose doctests fail offers
  "Self-debug" (quickfix) for our diagnostics, also when the client sends them back without their
  `source` (ALE keeps only range, code and message), and anywhere in a function the last check found
  failing when the client sends none (the server's own knowledge, moved through the edits made since,
  while the function's text is unchanged: diagnostics.py `known`), as Neovim after an edit above the
  function and eglot at the end of a line do.
- A function whose last run gave up offers "Apply the closest try of ..." (refactor.rewrite): that run's
  nearest body, which still fails, applied only when the user picks it (as `generate --write-closest`).
- A function whose last run's result is unchanged since and has changes its examples and tests let pass
  (strength.py) offers "Add example `f(30)` → 10.0" for each example the run suggests (and "Add 2 suggested
  examples" for all of them): a workspace edit that writes it into the docstring
  (`strength.examples.add_examples`) on the document's current text and version. Kind quickfix when asked
  for with its loosely-pinned diagnostic, refactor.rewrite otherwise; never preferred (the user confirms what
  the example shows). Clients that can resolve an action's `edit` get the edit from `codeAction/resolve`
  (nothing is computed while listing), others get it in the action.
- While a run works on the function under the cursor, it offers "Cancel ..." instead, in the kind of
  the run, so clients without a progress UI can stop it.
- A syntax error elsewhere in the file does not hide the actions (the function's own text is
  parsed); starting one then answers with the syntax error.
- Clients without code action literal support get bare `Command`s, as the protocol requires.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pycapsule.lsp import wording
from pycapsule.lsp.apply import replacement_edit
from pycapsule.lsp.diagnostics import DoctestDiagnostics
from pycapsule.lsp.documents import CapsuleOutline, ParsedDocument
from pycapsule.lsp.protocol import (
    CANNOT_RUN_CODE,
    CMD_APPLY_CLOSEST,
    CMD_CANCEL,
    CMD_GENERATE,
    CMD_SELF_DEBUG,
    DIAGNOSTIC_CODE,
    DIAGNOSTIC_SOURCE,
    FIX_KIND,
    GENERATE_KIND,
    GENERATE_TITLE,
    LOOSE_CODE,
    action_kind,
    add_example_title,
    add_examples_title,
    cancel_title,
    closest_title,
    fix_title,
)
from pycapsule.lsp.runs import Runs
from pycapsule.lsp.services import Services
from pycapsule.lsp.status import show
from pycapsule.lsp.strength import Measured


def register(server: LanguageServer, services: Services) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[GENERATE_KIND, FIX_KIND], resolve_provider=True),
    )
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction | types.Command] | None:
        try:
            document = services.documents.near(params.text_document.uri, params.range.start.line)
        except (OSError, UnicodeDecodeError):  # not open and not readable on disk: nothing to offer
            return None
        capabilities = server.client_capabilities.text_document
        code_action = capabilities.code_action if capabilities else None
        tags = _tags(code_action)
        generate = _generate_actions(services.runs, document, params, tags)
        for action in generate:
            if action.command is not None and action.command.command == CMD_GENERATE:
                services.read_ahead.offer(document.uri, action.command.arguments[0]["qualname"],
                                          document.version)
        actions = [*generate, *_fix_actions(services.runs, services.diagnostics, document, params, tags),
                   *_example_actions(server, services, document, params, _resolves_edits(code_action))]
        only = params.context.only
        if only:
            actions = [a for a in actions if any(kind_matches(a.kind, wanted) for wanted in only)]
        if not actions:
            return None
        if not (code_action and code_action.code_action_literal_support is not None):
            return [action.command for action in actions if action.command is not None]
        return list(actions)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(action: types.CodeAction) -> types.CodeAction:
        """The edit of an "Add example" action (the others have a command and nothing to resolve)."""
        data = action.data
        if action.edit is not None or not (isinstance(data, dict) and isinstance(data.get("examples"), list)):
            return action
        try:
            document = services.documents.parsed(str(data.get("uri")))
        except (OSError, UnicodeDecodeError):
            return action
        function = document.outline_of(str(data.get("qualname")))
        measured = services.strengths.current(document, function) if function is not None else None
        if measured is None:
            show(server, wording.examples_outdated(data.get("qualname")), types.MessageType.Warning)
            return action
        action.edit = _examples_edit(server, document, measured, data["examples"])
        return action


def kind_matches(kind: types.CodeActionKind | str | None, wanted: types.CodeActionKind | str) -> bool:
    """Kinds are hierarchical by dots: `refactor` asks for `refactor.rewrite`, not `refactorish`."""
    if kind is None:
        return False
    have, want = _kind_value(kind), _kind_value(wanted)
    return want == "" or have == want or have.startswith(want + ".")


def _kind_value(kind: types.CodeActionKind | str) -> str:
    return kind.value if isinstance(kind, types.CodeActionKind) else str(kind)


def target_arguments(document: ParsedDocument, capsule: CapsuleOutline) -> list[Any]:
    return [{"uri": document.uri, "qualname": capsule.qualname, "version": document.version}]


_Tags = list[types.CodeActionTag] | None


def _tags(code_action: types.CodeActionClientCapabilities | None) -> _Tags:
    support = code_action.tag_support if code_action else None
    if support and types.CodeActionTag.LlmGenerated in support.value_set:
        return [types.CodeActionTag.LlmGenerated]
    return None


def _cancel_action(document: ParsedDocument, capsule: CapsuleOutline, mode: str) -> types.CodeAction:
    title = cancel_title(mode, capsule.name)
    command = types.Command(title=title, command=CMD_CANCEL, arguments=target_arguments(document, capsule))
    return types.CodeAction(title=title, kind=action_kind(mode), command=command)


def _generate_actions(
    runs: Runs, document: ParsedDocument, params: types.CodeActionParams, tags: _Tags
) -> list[types.CodeAction]:
    capsule = document.outline_at_line(params.range.start.line)
    if capsule is None:
        return []
    run = runs.running(document.uri, capsule.qualname)
    if run is not None:
        return [_cancel_action(document, capsule, run.mode)]
    actions = []
    if capsule.is_stub:
        command = types.Command(
            title=GENERATE_TITLE, command=CMD_GENERATE, arguments=target_arguments(document, capsule)
        )
        actions.append(types.CodeAction(title=GENERATE_TITLE, kind=GENERATE_KIND, command=command, tags=tags))
    closest = runs.closest(document.uri, capsule.qualname)
    if closest is not None:
        title = closest_title(capsule.name, closest.attempt)
        command = types.Command(title=title, command=CMD_APPLY_CLOSEST,
                                arguments=target_arguments(document, capsule))
        actions.append(types.CodeAction(title=title, kind=GENERATE_KIND, command=command, tags=tags))
    return actions


def is_ours(diagnostic: types.Diagnostic) -> bool:
    """Our doctest diagnostic, as sent, or as sent back by a client that keeps only range, code, message;
    not one that only the sandbox's lack makes fail (self-debugging cannot fix that), nor one that says a
    passing body is loosely pinned (its fix is an example, not a new body)."""
    if diagnostic.code in (CANNOT_RUN_CODE, LOOSE_CODE):
        return False
    if diagnostic.source is not None:
        return diagnostic.source == DIAGNOSTIC_SOURCE
    return diagnostic.code == DIAGNOSTIC_CODE


def _fix_actions(
    runs: Runs,
    checks: DoctestDiagnostics,
    document: ParsedDocument,
    params: types.CodeActionParams,
    tags: _Tags,
) -> list[types.CodeAction]:
    by_function: dict[str, list[types.Diagnostic]] = {}
    for diagnostic in filter(is_ours, params.context.diagnostics):
        capsule = _diagnosed_capsule(document, diagnostic)
        if capsule is not None and not capsule.is_stub:
            by_function.setdefault(capsule.qualname, []).append(diagnostic)
    for capsule in _around(document, params.range.start.line):
        if capsule.qualname not in by_function and not capsule.is_stub:
            known = [diagnostic for diagnostic in checks.known(document, capsule) if is_ours(diagnostic)]
            if known:
                by_function[capsule.qualname] = known
    actions = []
    for qualname, diagnostics in by_function.items():
        capsule = document.outline_of(qualname)
        if capsule is None or runs.running(document.uri, qualname):
            continue  # a running function's cancel action comes from _generate_actions
        title = fix_title(capsule.name)
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
                tags=tags,
            )
        )
    return actions


def _resolves_edits(code_action: types.CodeActionClientCapabilities | None) -> bool:
    """The client asks `codeAction/resolve` for an action's missing `edit` and sends back its `data`."""
    support = code_action.resolve_support if code_action else None
    return bool(support and "edit" in support.properties and code_action and code_action.data_support)


def _example_actions(
    server: LanguageServer, services: Services, document: ParsedDocument, params: types.CodeActionParams,
    resolves: bool,
) -> list[types.CodeAction]:
    """"Add example ..." for the function under the cursor and those the context's loosely-pinned diagnostics
    name, while what their last run suggested still holds (their text unchanged)."""
    named = {}
    for diagnostic in params.context.diagnostics:
        data = diagnostic.data
        if diagnostic.code == LOOSE_CODE and isinstance(data, dict) and isinstance(data.get("qualname"), str):
            named[data["qualname"]] = diagnostic
    functions = {f.qualname: f for f in filter(None, map(document.outline_of, named))}
    here = document.outline_at_line(params.range.start.line)
    if here is not None:
        functions.setdefault(here.qualname, here)
    actions = []
    for qualname, function in functions.items():
        measured = services.strengths.current(document, function)
        if measured is None or not measured.strength.suggested:
            continue
        if services.runs.running(document.uri, qualname):
            continue
        diagnostic = named.get(qualname)
        suggested = measured.strength.suggested
        choices = [([n], add_example_title(e.call, e.output)) for n, e in enumerate(suggested)]
        if len(suggested) > 1:
            choices.append((list(range(len(suggested))), add_examples_title(len(suggested))))
        for chosen, title in choices:
            action = types.CodeAction(
                title=title,
                kind=FIX_KIND if diagnostic is not None else GENERATE_KIND,
                diagnostics=[diagnostic] if diagnostic is not None else None,
                data={"uri": document.uri, "qualname": qualname, "version": document.version,
                      "examples": chosen},
            )
            if not resolves:
                action.edit = _examples_edit(server, document, measured, chosen)
                if action.edit is None:
                    continue
            actions.append(action)
    return actions


def _examples_edit(
    server: LanguageServer, document: ParsedDocument, measured: Measured, chosen: list[Any]
) -> types.WorkspaceEdit | None:
    """The document's current text with the chosen suggested examples in the function's docstring, as one
    edit for its current version; None when there is nothing to add (or no docstring to add it to)."""
    # Imported on first use: it brings the sandbox's job types, ~50 ms of the server's start otherwise.
    from pycapsule.strength.examples import add_examples

    suggested = measured.strength.suggested
    examples = [suggested[n] for n in chosen if isinstance(n, int) and 0 <= n < len(suggested)]
    try:
        text = add_examples(document.text, measured.qualname, examples, document.path)
    except ValueError:  # CapsuleError too: the module no longer parses
        return None
    if not examples or text == document.text:
        return None
    return replacement_edit(server, document.uri, document.version, document.text, text)


def _around(document: ParsedDocument, line0: int) -> list[CapsuleOutline]:
    """The functions whose lines hold the 0-based line, innermost first."""
    line = line0 + 1
    inside = [f for f in document.outline if f.first_line <= line <= f.end_line]
    return sorted(inside, key=lambda f: f.first_line, reverse=True)


def _diagnosed_capsule(document: ParsedDocument, diagnostic: types.Diagnostic) -> CapsuleOutline | None:
    data = diagnostic.data
    if isinstance(data, dict) and isinstance(data.get("qualname"), str):
        found = document.outline_of(data["qualname"])
        if found is not None:
            return found
    # Some clients drop `data`; the diagnostic's line still says whose doctest failed.
    return document.outline_at_line(diagnostic.range.start.line)
