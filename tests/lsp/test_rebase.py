"""Moving a run's edits onto text the user changed meanwhile, and LSP positions in UTF-16."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pycapsule.lsp.positions import LineIndex
from pycapsule.lsp.rebase import Conflict, MovedEdit, rebase
from pygls.workspace.position_codec import PositionCodec

OLD = "import os\n\n\ndef f(x):\n    ...\n\n\ndef g():\n    return 1\n"
BODY = OLD.index("    ...\n")
FUNCTION = (OLD.index("def f"), BODY + len("    ...\n"))
EDIT = MovedEdit(BODY, BODY + len("    ...\n"), "    return x\n")


def apply(text: str, edits: list[MovedEdit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new_text + text[edit.end :]
    return text


def test_unchanged_text_keeps_the_edits():
    assert rebase(OLD, OLD, [EDIT], [FUNCTION]) == [EDIT]


def test_typing_above_the_function_moves_the_edit_down():
    new = "import sys\n" + OLD.replace("def g():\n    return 1\n", "def g():\n    return 2\n")
    moved = rebase(OLD, new, [EDIT], [FUNCTION])
    assert apply(new, moved) == "import sys\n" + OLD.replace("    ...\n", "    return x\n").replace(
        "return 1", "return 2"
    )


def test_typing_inside_the_function_is_a_conflict():
    new = OLD.replace("def f(x):", "def f(x, y):")
    with pytest.raises(Conflict, match="function"):
        rebase(OLD, new, [EDIT], [FUNCTION])


def test_an_import_edit_on_a_changed_line_is_a_conflict():
    import_edit = MovedEdit(0, 0, "import math\n")
    new = OLD.replace("import os\n", "import os, re\n")
    with pytest.raises(Conflict):
        rebase(OLD, new, [import_edit, EDIT], [FUNCTION])


def test_positions_count_utf16_units():
    text = 'x = "😋é"\ny = 1\n'
    index = LineIndex(text, PositionCodec(types.PositionEncodingKind.Utf16))
    quote = text.index('"', 5)
    assert index.position(quote) == types.Position(line=0, character=8)
    assert index.offset(types.Position(line=0, character=8)) == quote
    assert index.position(text.index("y")) == types.Position(line=1, character=0)


def test_positions_in_utf32_and_crlf():
    text = 'a = "😋"\r\nb = 2\r\n'
    index = LineIndex(text, PositionCodec(types.PositionEncodingKind.Utf32))
    assert index.position(text.index("b")) == types.Position(line=1, character=0)
    assert index.position(text.index('"', 5)) == types.Position(line=0, character=6)
