"""`workspace/executeCommand` commands, for code actions and for editors' key bindings.

    pycapsule.generate   {"uri", "qualname"} or {"uri", "position": {"line", "character"}}
                         (or the two as separate arguments): fill a stub until its doctests pass
    pycapsule.selfDebug  same arguments: debug the current body until its doctests pass
    pycapsule.cancel     optional {"uri", "qualname"}: stop matching runs (all when no argument)

generate/selfDebug answer when the run ends, with {"status", "message", "attempts"}; status is
passed, not_verified, gave_up, cancelled, refused (the user changed the function meanwhile),
busy (already running) or error. `$/cancelRequest` on that request stops the run.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from pycapsule.capsule import CapsuleError
from pycapsule.lsp.actions import CMD_CANCEL, CMD_GENERATE, CMD_SELF_DEBUG
from pycapsule.lsp.documents import FunctionOutline, ParsedDocument
from pycapsule.lsp.runs import Mode
from pycapsule.lsp.server import PycapsuleServer


def register(server: PycapsuleServer) -> None:
    @server.command(CMD_GENERATE)
    async def generate(ls: PycapsuleServer, *arguments: Any) -> dict[str, Any]:
        return await _start(ls, arguments, "generate")

    @server.command(CMD_SELF_DEBUG)
    async def self_debug(ls: PycapsuleServer, *arguments: Any) -> dict[str, Any]:
        return await _start(ls, arguments, "fix")

    @server.command(CMD_CANCEL)
    def cancel(ls: PycapsuleServer, *arguments: Any) -> dict[str, Any]:
        target = _target(arguments) if arguments else {}
        stopped = ls.runs.cancel(target.get("uri"), target.get("qualname"))
        return {"cancelled": stopped}


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


def _target(arguments: tuple[Any, ...]) -> dict[str, Any]:
    """The arguments as one {"uri", "qualname" | "position"} object, whichever way they came."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        target = dict(arguments[0])
    elif len(arguments) == 2 and isinstance(arguments[0], str):
        key = "qualname" if isinstance(arguments[1], str) else "position"
        target = {"uri": arguments[0], key: arguments[1]}
    else:
        raise _invalid(
            'Expected {"uri": ..., "qualname": ...} or {"uri": ..., "position": {"line", "character"}}.'
        )
    if not isinstance(target.get("uri"), str):
        raise _invalid('The command needs the document\'s "uri" as a string.')
    return target


def _function(document: ParsedDocument, target: dict[str, Any]) -> FunctionOutline:
    if document.syntax_error is not None:
        raise _invalid(f"{document.uri} cannot be parsed: {document.syntax_error.message}")
    qualname = target.get("qualname")
    if isinstance(qualname, str):
        function = document.function(qualname)
        if function is None:
            raise _invalid(f"There is no function `{qualname}` in {document.uri}.")
        return function
    position = target.get("position")
    if not (isinstance(position, dict) and isinstance(position.get("line"), int)):
        raise _invalid('The command needs a "qualname" or a "position" {"line", "character"}.')
    function = document.function_at_line(position["line"])
    if function is None:
        raise _invalid(f"There is no function at line {position['line'] + 1} of {document.uri}.")
    return function


async def _start(ls: PycapsuleServer, arguments: tuple[Any, ...], mode: Mode) -> dict[str, Any]:
    target = _target(arguments)
    try:
        document = ls.parsed(target["uri"])
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(f"{target['uri']} cannot be read: {exc}") from None
    function = _function(document, target)
    if mode == "generate" and not function.is_stub:
        raise _invalid(f"`{function.name}` already has a body; use {CMD_SELF_DEBUG} to debug it.")
    request_id = ls.protocol.msg_id
    try:
        capsule = await asyncio.get_running_loop().run_in_executor(None, document.capsule, function.qualname)
    except CapsuleError as exc:
        raise _invalid(exc.message) from None
    if capsule is None:
        raise _invalid(f"There is no function `{function.qualname}` in {document.uri}.")
    return await ls.runs.run(document, capsule, mode, request_id=request_id)
