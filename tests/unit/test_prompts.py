"""The task message ends with the function to write: a module context that shows functions or classes goes
before the task, since a prompt that ends with a neighbour's first lines gets that neighbour completed
instead (docs/results/realcode/context-first); a context of imports and constants only stays after it."""

from __future__ import annotations

from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context
from pycapsule.prompts import generate_messages

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
