"""The task message ends with the function to write: a module context that shows functions or classes goes
before the task, since a prompt that ends with a neighbour's first lines gets that neighbour completed
instead (docs/results/realcode/context-first); a context of imports and constants only stays after it."""

from __future__ import annotations

import re

from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context
from pycapsule.prompts import answer_prefix, fix_messages, function_task, generate_messages, keep_signature

WITH_A_NEIGHBOUR = '''import re


def words(text):
    """The words of `text`, in order."""
    found = re.findall(r"[a-z]+", text.lower())
    return found


def count_words(text):
    """How many words `text` has.

    >>> count_words("Two words")
    2
    """
'''

WITH_IMPORTS_ONLY = '''from typing import List


def total(values: List[int]) -> int:
    """The sum of `values`.

    >>> total([1, 2])
    3
    """
'''

BOX = '''class Box:
    def size(self):
        """The size."""
        return 1

    def double(self):
        """Twice the size.

        >>> Box().double()
        2
        """
'''


def task_message(source: str, name: str) -> str:
    capsule = capsule_by_qualname(source, name)
    return generate_messages(capsule, module_context(capsule))[-1]["content"]


def test_a_context_that_shows_a_function_comes_first_and_the_prompt_ends_with_the_target() -> None:
    message = task_message(WITH_A_NEIGHBOUR, "count_words")
    context, task = message.split("Complete this Python function:", 1)
    assert "def words(text):" in context and "def words" not in task
    assert context.startswith("The function below can use these names from its module")
    assert task.rstrip().endswith('    2\n    """\n```')


def test_a_context_of_imports_only_follows_the_task() -> None:
    message = task_message(WITH_IMPORTS_ONLY, "total")
    task, context = message.split("It can use these names from its module", 1)
    assert task.startswith("Complete this Python function:") and "def total" in task
    assert "from typing import List" in context and "def " not in context


def test_a_method_in_a_class_is_named_with_its_owner_after_the_context() -> None:
    message = task_message(BOX, "Box.double")
    context, task = message.split("Complete this Python function", 1)
    assert "def size(self):" in context
    assert task.startswith(" (it is `Box.double`, defined inside `Box`):")


def test_no_context_is_the_task_alone() -> None:
    capsule = capsule_by_qualname(WITH_IMPORTS_ONLY, "total")
    message = generate_messages(capsule, "")[-1]["content"]
    assert message.startswith("Complete this Python function:") and "module" not in message


# Docstrings with Markdown examples: the prompt's code blocks must hold them whole.
FENCED_EXAMPLES = '''def words(text):
    """The words of `text`.

    ```pycon
    >>> words("a b")
    ['a', 'b']

    ```
    """
    return text.split()


def slug(text: str) -> str:
    """The words of `text`, joined by hyphens.

    ````markdown
    ```pycon
    >>> slug("Hello World")
    'hello-world'
    ```
    ````
    """
'''


def code_blocks(text: str) -> list[str]:
    """The content of each code block, ended by the first line that is only its fence's character, at
    least as many, however indented: stricter than CommonMark, as a model may read it."""
    blocks: list[str] = []
    fence, lines = "", []
    for line in text.split("\n"):
        if not fence:
            opening = re.fullmatch(r"(`{3,}|~{3,})\w*", line)
            fence, lines = (opening[1], []) if opening else ("", [])
        elif set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            blocks.append("\n".join(lines))
            fence = ""
        else:
            lines.append(line)
    return blocks


def test_fenced_examples_in_the_task_and_its_context_cannot_close_their_code_blocks() -> None:
    capsule = capsule_by_qualname(FENCED_EXAMPLES, "slug")
    context = module_context(capsule)
    assert "```pycon" in context
    message = generate_messages(capsule, context)[-1]["content"]
    assert code_blocks(message) == [context.strip(), function_task(capsule).removesuffix("\n")]


def test_fenced_examples_in_earlier_code_cannot_close_its_code_block_in_a_fix_request() -> None:
    capsule = capsule_by_qualname(FENCED_EXAMPLES, "slug")
    code = FENCED_EXAMPLES.split("\n\n\n")[1] + "    return '-'.join(words(text.lower()))\n"
    messages = fix_messages(capsule, None, [], code, "Expected: 'hello-world'")
    assert messages[-2]["role"] == "assistant"
    assert code_blocks(messages[-2]["content"]) == [code.strip()]


def test_the_answer_prefix_opens_a_block_its_docstring_cannot_close() -> None:
    capsule = capsule_by_qualname(FENCED_EXAMPLES, "slug")
    prefix = answer_prefix(capsule)
    fence = prefix.split("python", 1)[0]
    assert code_blocks(f"{prefix}    return text\n{fence}") == [f"{function_task(capsule)}    return text"]


MULTI_LINE_SIGNATURE = '''class Names:
    @staticmethod
    @functools.cache
    def first(
        names: list[str],
        default: str = "```",
    ) -> str | None:
        """The first name."""
'''


def test_a_changed_signature_is_asked_back_whole_in_a_block_or_on_its_one_line() -> None:
    sentence = keep_signature(capsule_by_qualname(MULTI_LINE_SIGNATURE, "Names.first"))
    assert sentence.startswith("Keep this signature exactly:\n")
    signature = 'def first(\n    names: list[str],\n    default: str = "```",\n) -> str | None:'
    assert code_blocks(sentence) == [signature]
    one_line = capsule_by_qualname("@cache\nasync def total(values):  # sum\n    ...\n", "total")
    assert keep_signature(one_line) == "Keep this signature exactly: async def total(values):"
