"""`workspace/executeCommand` commands, for code actions and for editors' key bindings.

    pycapsule.generate   {"uri", "qualname"} or {"uri", "position": {"line", "character"}}
                         (or the two as separate arguments): fill a stub until its doctests pass
    pycapsule.selfDebug  same arguments: debug the current body until its doctests pass
    pycapsule.cancel     optional {"uri", "qualname"} or {"runId"}: stop matching runs (all when
                         no argument)
    pycapsule.applyClosest {"uri", "qualname"}: apply the closest try of the function's last run that
                         gave up (it still fails): {"status": "applied" | "refused" | ..., "message"}

generate/selfDebug answer at once: {"status": "started", "runId", "message"}, or {"status": "busy"
| "error", "message"} when no run started (already running; the file has a syntax error). How the
run ended comes later, in the last `pycapsule/status` of that run id (see status.py and runs.py),
also when the engine's process, parsing the whole module after the answer, finds that the run cannot
start (the file does not parse elsewhere): outcome "error", one sentence. The names are protocol.py's.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from pycapsule.lsp import wording
from pycapsule.lsp.host_messages import Mode, Refusal
from pycapsule.lsp.markup import no_links
from pycapsule.lsp.protocol import CMD_APPLY_CLOSEST, CMD_CANCEL, CMD_GENERATE, CMD_SELF_DEBUG
from pycapsule.lsp.services import Services
from pycapsule.lsp.status import show


def register(server: LanguageServer, services: Services) -> None:
    @server.command(CMD_GENERATE)
    async def generate(*arguments: Any) -> dict[str, Any]:
        return _answer(await _start(services, arguments, "generate"))

    @server.command(CMD_SELF_DEBUG)
    async def self_debug(*arguments: Any) -> dict[str, Any]:
        return _answer(await _start(services, arguments, "fix"))

    @server.command(CMD_APPLY_CLOSEST)
    async def apply_closest(*arguments: Any) -> dict[str, Any]:
        target = _target(arguments)
        if not isinstance(target.get("qualname"), str):
            raise _invalid(wording.NEEDS_QUALNAME)
        return _answer(await services.runs.apply_closest(target["uri"], target["qualname"]))

    @server.command(CMD_CANCEL)
    def cancel(*arguments: Any) -> dict[str, Any]:
        if len(arguments) == 1 and isinstance(arguments[0], dict) and "runId" in arguments[0]:
            return {"cancelled": services.runs.cancel(run_id=str(arguments[0]["runId"]))}
        target = _target(arguments) if arguments else {}
        stopped = services.runs.cancel(target.get("uri"), target.get("qualname"))
        return {"cancelled": stopped}


def _answer(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer as the client may show it (in a notification): its message without links."""
    return {**answer, "message": no_links(answer["message"])} if "message" in answer else answer


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=no_links(message))


def _target(arguments: tuple[Any, ...]) -> dict[str, Any]:
    """The arguments as one {"uri", "qualname" | "position"} object, whichever way they came."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        target = dict(arguments[0])
    elif len(arguments) == 2 and isinstance(arguments[0], str):
        key = "qualname" if isinstance(arguments[1], str) else "position"
        target = {"uri": arguments[0], key: arguments[1]}
    else:
        raise _invalid(wording.EXPECTED_TARGET)
    if not isinstance(target.get("uri"), str):
        raise _invalid(wording.NEEDS_URI)
    return target


async def _start(services: Services, arguments: tuple[Any, ...], mode: Mode) -> dict[str, Any]:
    target = _target(arguments)
    qualname, position = target.get("qualname"), target.get("position")
    if not isinstance(qualname, str):
        qualname = None
        if not (isinstance(position, dict) and isinstance(position.get("line"), int)):
            raise _invalid(wording.NEEDS_POSITION)
    try:
        text = services.server.workspace.get_text_document(target["uri"]).source
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(wording.unreadable(target["uri"], exc)) from None
    line = None if qualname is not None else position["line"]
    answer = await services.runs.start(target["uri"], text, qualname, line, mode)
    if not isinstance(answer, Refusal):
        return answer
    if answer.kind == "target":
        raise _invalid(answer.message)
    show(services.server, answer.message, types.MessageType.Warning)
    return {"status": "error", "message": answer.message}
