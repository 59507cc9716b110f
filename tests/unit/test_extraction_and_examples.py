"""Code extraction from replies and example-call stripping, beyond the corpus."""

from __future__ import annotations

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import NoCodeError, extract_code, fenced_blocks, strip_thinking
from pycapsule.debugging.signature import splice

FENCE = "```"


def test_the_block_that_defines_the_target_wins_over_earlier_ones() -> None:
    reply = (
        f"First a helper:\n{FENCE}python\ndef helper(x):\n    return x\n{FENCE}\n"
        f"Now the function:\n{FENCE}python\ndef target(x):\n    return helper(x) + 1\n{FENCE}\n"
        f"Run it:\n{FENCE}bash\npython target.py\n{FENCE}\n"
    )
    code = extract_code(reply, "target")
    assert "def target(x):" in code
    assert "def helper(x):" in code  # carried along from the other block
    assert "python target.py" not in code


def test_a_later_corrected_block_wins() -> None:
    reply = (
        f"{FENCE}python\ndef target(x):\n    return x - 1\n{FENCE}\nOops, fixed:\n"
        f"{FENCE}python\ndef target(x):\n    return x + 1\n{FENCE}"
    )
    assert "x + 1" in extract_code(reply, "target")
    assert "x - 1" not in extract_code(reply, "target")


def test_tilde_fences_and_longer_fences() -> None:
    reply = "~~~python\ndef target():\n    return '```'\n~~~\n"
    assert extract_code(reply, "target") == "def target():\n    return '```'\n"
    reply = "````python\ndef target():\n    return 1\n````"
    assert extract_code(reply, "target") == "def target():\n    return 1\n"


def test_thinking_is_dropped_even_when_unclosed_or_only_closed() -> None:
    assert strip_thinking("<think>a</think>b<think>c") == "b"
    assert strip_thinking("reasoning...</think>answer") == "answer"
    with pytest.raises(NoCodeError):
        extract_code("<think>def target(): return 1", "target")


def test_empty_reply_is_a_clear_error() -> None:
    with pytest.raises(NoCodeError, match=r"The reply is empty\."):
        extract_code("  \n", "target")


def test_code_that_shares_lines_with_kept_code_is_left_alone() -> None:
    code = "import math; print(math.pi)\ndef target():\n    return 1\n"
    assert strip_example_calls(code, "target") == code


def test_setup_code_the_function_needs_is_kept() -> None:
    code = (
        "TABLE = []\nfor i in range(10):\n    TABLE.append(i * i)\n\n"
        "def target(n):\n    return TABLE[n]\n\n# Try it\nprint(target(3))\n"
    )
    assert strip_example_calls(code, "target") == (
        "TABLE = []\nfor i in range(10):\n    TABLE.append(i * i)\n\ndef target(n):\n    return TABLE[n]\n"
    )


def test_inputs_made_only_for_examples_go_with_them() -> None:
    code = "def target(xs):\n    return sorted(xs)\n\nsample = [3, 1, 2]\nexpected = [1, 2, 3]\n" \
        "assert target(sample) == expected\n"
    assert strip_example_calls(code, "target") == "def target(xs):\n    return sorted(xs)\n"


def test_unparsable_code_is_returned_unchanged_for_the_splice_to_report() -> None:
    assert strip_example_calls("def target(:\n", "target") == "def target(:\n"


def test_a_huge_reply_of_near_code_ends_in_a_reason() -> None:
    reply = "\n".join(f"def broken_{n}(:\nimport" for n in range(3000))
    with pytest.raises(NoCodeError, match="no Python code"):
        extract_code(reply, "target")


def test_a_fence_inside_a_list_item_is_dedented() -> None:
    reply = "1. Write it:\n\n    ```python\n    def target(x):\n        return x\n    ```\n"
    assert extract_code(reply, "target") == "def target(x):\n    return x\n"


# A reply repeats the user's docstring; Markdown examples in it must not end the reply's code block.
DOCSTRING_EXAMPLES = {
    "pycon": ("```pycon", ">>> target(2)", "4", "", "```"),
    "bare": ("```", ">>> target(2)", "4", "", "```"),
    "tildes": ("~~~python", ">>> target(2)", "4", "", "~~~"),
    "nested": ("````markdown", "```pycon", ">>> target(2)", "4", "", "```", "````"),
}
REPLY_FENCES = {
    "backticks": ("```python", "```"),
    "tildes": ("~~~python", "~~~"),
    "four backticks": ("````python", "````"),
    "four backticks closed by three": ("````python", "```"),  # as a model may continue a prefilled answer
}


def function_with(example: tuple[str, ...], fences_indented: bool = True) -> str:
    """`target` with `example` in its docstring; `fences_indented=False`: the reply moved the fence lines
    to column 0."""
    lines = [
        line if not fences_indented and line.startswith(("`", "~")) else f"    {line}".rstrip()
        for line in example
    ]
    docstring = "\n".join(lines)
    return f'def target(x):\n    """Twice x.\n\n{docstring}\n    """\n    return 2 * x\n'


def reply_shapes(code: str, opening: str, closing: str) -> dict[str, str]:
    return {
        "block": f"{opening}\n{code}{closing}",
        "prose and a usage block": f"Here it is:\n\n{opening}\n{code}{closing}\n\nUsage:\n\n"
                                   f"{FENCE}python\nprint(target(3))\n{FENCE}\n",
        "unterminated": f"{opening}\n{code}",
    }


COMPLETE_REPLIES = [
    pytest.param(reply, function_with(example, indented), id=f"{docstring}-{fence}-{shape}-"
                 f"{'indented' if indented else 'unindented'}")
    for docstring, example in DOCSTRING_EXAMPLES.items()
    for fence, (opening, closing) in REPLY_FENCES.items()
    for indented in (True, False)
    for shape, reply in reply_shapes(function_with(example, indented), opening, closing).items()
]


@pytest.mark.parametrize(("reply", "function"), COMPLETE_REPLIES)
def test_a_reply_whose_code_block_is_complete_is_extracted_whatever_fences_its_docstring_holds(
        reply: str, function: str) -> None:
    assert extract_code(reply, "target") == function
    user_module = function_with(DOCSTRING_EXAMPLES["pycon"]).replace("return 2 * x", "...")
    spliced = splice(capsule_by_qualname(user_module, "target"), strip_example_calls(function, "target"))
    assert spliced.body == "    return 2 * x\n"


def test_fences_close_by_commonmark_s_rules() -> None:
    def blocks(text: str) -> list[str]:
        return [block.code for block in fenced_blocks(text)]

    # Indented four columns more than the opening fence: content (a docstring's example), not a closing fence.
    assert blocks(f"{FENCE}text\na\n    {FENCE}\nb\n{FENCE}\n") == [f"a\n    {FENCE}\nb\n"]
    assert blocks(f"{FENCE}text\na\n   {FENCE}\nb\n") == ["a\n"]
    assert blocks(f"~~~text\na\n{FENCE}\n~~~~\n") == [f"a\n{FENCE}\n"]
    assert blocks(f"````text\na\n{FENCE}\n````\n") == [f"a\n{FENCE}\n"]
    assert blocks(f"{FENCE}text\na\n{FENCE}pycon\n{FENCE}\n") == [f"a\n{FENCE}pycon\n"]


def test_a_fenced_example_in_an_unfenced_reply_s_docstring_does_not_hide_the_function() -> None:
    function = function_with(DOCSTRING_EXAMPLES["pycon"])
    assert extract_code(function, "target") == function
    assert extract_code(f"Sure.\n\n{function}", "target") == function
