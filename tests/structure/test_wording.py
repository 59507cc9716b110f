"""Every sentence a front end composes for the user is in its wording module (issue 67): lsp/wording.py for
the language server, commands/wording.py for the command line. Elsewhere a message is passed on, never
written:

- in the language server, what goes to `show`, `log` and `send_status`, the reason of a `Refusal`, a
  `message=` argument and a `"message"` entry of an answer is a name or a call, not text written there;
- on the command line, what goes to `say` (and `progress.say`), `UsageError`, `CommandError` and
  argparse's `ArgumentTypeError` likewise.

"Written there" is a string literal, an f-string, or one of them joined (`+`, `%`, `.format`, `a if c else
b`). Read with `ast` only. status.py is the channel that puts "pycapsule: " before every message it sends;
the words of the loop's events and outcomes are the shared core's (event_text.py, outcome_text.py), not a
front end's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.checkout import ROOT

PACKAGE = ROOT / "server" / "pycapsule"
LSP_EXEMPT = {"wording.py", "status.py"}
COMMANDS_EXEMPT = {"wording.py"}

LSP_CALLS = {"show": 1, "log": 1, "send_status": 2, "Refusal": 1}
"""Calls whose argument at that position (0-based) is a message, in the language server."""
COMMAND_CALLS = {"say": -1, "UsageError": 0, "CommandError": 0, "ArgumentTypeError": 0}
"""The same on the command line (-1: the last positional argument, as in `say(PREFIX, text)` and
`progress.say(text)`)."""


def written(node: ast.expr | None) -> bool:
    """Text written in place: a non-empty string literal, an f-string, or an expression made of them."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value != ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return written(node.left) or written(node.right)
    if isinstance(node, ast.IfExp):
        return written(node.body) or written(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return written(node.func.value)
    return False


def _name(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def composed(source: str, calls: dict[str, int], keywords: bool) -> Iterator[int]:
    """The lines where `source` writes a message in place: the argument of one of `calls` at its position (or
    given as `message=`/`reason=`); with `keywords`, also any `message=` argument and `"message"` entry."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            where = calls.get(_name(node))
            if where is not None:
                positional = node.args[where] if -len(node.args) <= where < len(node.args) else None
                named = [k.value for k in node.keywords if k.arg in ("message", "reason")]
                if any(written(argument) for argument in [positional, *named]):
                    yield node.lineno
            elif keywords and any(k.arg == "message" and written(k.value) for k in node.keywords):
                yield node.lineno
        elif keywords and isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "message" and written(value):
                    yield node.lineno


def _found(folder: Path, exempt: set[str], calls: dict[str, int], keywords: bool) -> list[str]:
    return [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(folder.rglob("*.py"))
            if path.name not in exempt or path.parent != folder
            for line in composed(path.read_text(encoding="utf-8"), calls, keywords)]


def test_the_language_server_writes_its_sentences_only_in_lsp_wording() -> None:
    assert _found(PACKAGE / "lsp", LSP_EXEMPT, LSP_CALLS, keywords=True) == []


def test_the_commands_write_their_sentences_only_in_commands_wording() -> None:
    assert _found(PACKAGE / "commands", COMMANDS_EXEMPT, COMMAND_CALLS, keywords=False) == []


def test_the_check_finds_a_sentence_written_in_place_and_passes_one_passed_on() -> None:
    lsp = {
        'show(server, f"`{name}` is busy")': [1],
        'log(server, "the editor said no", level)': [1],
        'send_status(server, "idle", "done: " + why)': [1],
        'Refusal("target", reason="no function here")': [1],
        'return {"status": "error", "message": f"no {name}"}': [1],
        'types.Diagnostic(range=r, message="raised here")': [1],
        'show(server, "{} failed".format(name))': [1],
        'show(server, f"{a}" if a else b)': [1],
        'show(server, wording.busy(name), types.MessageType.Warning)': [],
        'log(server, message)': [],
        'return {"status": "busy", "message": wording.closest_busy(name)}': [],
        'types.Diagnostic(range=r, message=finding.message)': [],
    }
    for source, lines in lsp.items():
        assert list(composed(source, LSP_CALLS, keywords=True)) == lines, source
    commands = {
        'say(PREFIX, f"wrote {path}")': [1],
        'progress.say("done")': [1],
        'raise UsageError(f"{path} is not a file")': [1],
        'say(PREFIX, wording.wrote(path))': [],
        'raise CommandError(str(error), kind="sandbox")': [],
        'print(f"{name:18} works here")': [],  # not a message call: the check does not claim it
    }
    for source, lines in commands.items():
        assert list(composed(source, COMMAND_CALLS, keywords=False)) == lines, source
