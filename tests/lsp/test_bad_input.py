"""Bad input gets one clear sentence and loses nothing; the server keeps answering."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.editor import Editor
from tests.lsp.sources import ADD_STUB, SYNTAX_ERROR
from tests.lsp.test_cancel import STUB_LINE
from tests.lsp.test_code_actions import line_of


def command(name: str, *arguments: object) -> types.Command:
    return types.Command(title="", command=name, arguments=list(arguments))


async def test_bad_command_arguments_are_one_sentence(editor: Editor):
    uri = editor.open("mod.py", ADD_STUB)
    cases = [
        ((), "Expected"),
        (({"qualname": "add"},), '"uri"'),
        (({"uri": uri, "qualname": "nope"},), "There is no function named 'nope' in "),
        # the sentence `check` and `generate` say (capsule.no_such_function), with what was likely meant
        (({"uri": uri, "qualname": "ad"},), "There is no function named 'ad' in "),
        (({"uri": uri, "qualname": "ad"},), "mod.py; did you mean 'add'?"),
        (({"uri": uri, "position": {"line": 0, "character": 0}},), "There is no function at line 1"),
        (({"uri": uri, "qualname": "double"},), "already has a body"),
    ]
    for arguments, says in cases:
        with pytest.raises(JsonRpcInvalidParams) as error:
            await editor.execute(command("pycapsule.generate", *arguments))
        assert says in str(error.value) and "\n" not in str(error.value), (arguments, str(error.value))
    assert editor.text(uri) == ADD_STUB and editor.applied == []
    assert await editor.code_actions(uri, STUB_LINE), "still answering"


async def test_generate_in_a_file_with_a_syntax_error_is_refused(editor: Editor):
    uri = editor.open("broken.py", SYNTAX_ERROR)
    answer = await editor.execute(command("pycapsule.generate", {"uri": uri, "qualname": "add"}))
    assert answer["status"] == "error" and "syntax error" in answer["message"], answer
    assert "runId" not in answer, "nothing was started"


IN_STRINGS = ADD_STUB + '''

TEMPLATE = """
def fake(x):
    ...
"""


def render(x):
    return """
def inner(y):
    ...
""" + x
'''


async def test_a_def_in_a_string_starts_a_run_that_the_whole_modules_parse_ends(editor: Editor):
    """The start answers from the definitions around its target, each parsed on its own, and takes a `def`
    at the start of a line in a string for a function; the engine's process, which parses the whole module
    after the answer, ends the run with its sentence."""
    uri = editor.open("strings.py", IN_STRINGS)
    fake_line, inner_line = line_of(IN_STRINGS, "def fake"), line_of(IN_STRINGS, "def inner")
    cases = [
        ({"uri": uri, "qualname": "fake"},
         "Generating `fake` did not start: there is no function named 'fake' in "),
        ({"uri": uri, "position": {"line": fake_line, "character": 4}},
         f"Generating `fake` did not start: there is no function at line {fake_line + 1} of {uri}."),
        ({"uri": uri, "position": {"line": inner_line, "character": 4}},
         f"Generating `inner` did not start: `inner` is not a function at line {inner_line + 1} of {uri}."),
    ]
    for arguments, says in cases:
        answer = await editor.execute(command("pycapsule.generate", arguments))
        assert answer["status"] == "started", (arguments, answer)
        end = await editor.run_end(answer["runId"], 30)
        assert end["status"] == "error" and says in end["message"], (arguments, end)
        assert "\n" not in end["message"], "one sentence"
    assert editor.text(uri) == IN_STRINGS and editor.applied == []


async def test_requests_about_a_file_that_does_not_exist_answer_nothing(editor: Editor):
    missing = editor.uri("missing.py")
    assert await editor.code_actions(missing, 0) is None
    assert await editor.hover(missing, 0, 0) is None
