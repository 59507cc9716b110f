"""Bad input gets one clear sentence and loses nothing; the server keeps answering."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.editor import Editor
from tests.lsp.sources import ADD_STUB, SYNTAX_ERROR
from tests.lsp.test_cancel import STUB_LINE


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


async def test_requests_about_a_file_that_does_not_exist_answer_nothing(editor: Editor):
    missing = editor.uri("missing.py")
    assert await editor.code_actions(missing, 0) is None
    assert await editor.hover(missing, 0, 0) is None
