"""Reading an answer stops once nothing more of it can count: its function is complete, it loops, or it
copies the prompt's context; an answer still needing what follows is read on."""

from __future__ import annotations

import pytest
from pycapsule.debugging.answer_watch import COMPLETE, COPIED, COPIED_LINES, LOOPED, AnswerTarget, AnswerWatch

MODULE = '''import re

RATE = 0.5


def clean(text):
    return re.sub(r"\\s+", " ", text).strip()


def late_fee(days):
    """The fee for returning a book `days` late.

    >>> late_fee(3)
    1.5
    """
'''
CONTEXT = "\n".join(f"HOLIDAY_{n} = ('a holiday name', {n}, 'long enough to count')" for n in range(40))
TARGET = AnswerTarget("late_fee", MODULE, CONTEXT)
FUNCTION = "def late_fee(days):\n    return min(days * RATE, 10.0)\n"


def streamed(text: str, target: AnswerTarget = TARGET, start: str = "", piece: int = 5) -> AnswerWatch:
    """The watch fed `text` in pieces until it ends the answer."""
    watch = AnswerWatch(target, start)
    for index in range(0, len(text), piece):
        if watch.feed(text[index:index + piece]) is not None:
            break
    return watch


def read(text: str, target: AnswerTarget = TARGET, start: str = "", piece: int = 5) -> tuple[str | None, str]:
    """How the watch ends `text` streamed in pieces, and the text it keeps."""
    watch = streamed(text, target, start, piece)
    return (watch.end, text[:watch.kept]) if watch.end is not None else (None, text)


def test_the_explanation_after_the_code_block_is_not_read() -> None:
    answer = f"Here it is:\n```python\n{FUNCTION}```\n"
    assert read(answer + "The fee grows by half a unit a day and stops at ten.\n" * 20) == (COMPLETE, answer)


def test_example_calls_after_the_function_are_not_read_nor_kept() -> None:
    calls = "print(late_fee(3))\nprint(late_fee(30))\n"
    end, kept = read(f"```python\n{FUNCTION}\n# Example usage\n{calls}```\n")
    assert end == COMPLETE and kept == f"```python\n{FUNCTION}\n# Example usage\n"


def test_bare_code_ends_with_the_first_top_level_line_after_the_function() -> None:
    end, kept = read(f"{FUNCTION}\nassert late_fee(3) == 1.5\n")
    assert (end, kept) == (COMPLETE, f"{FUNCTION}\n")


def test_a_helper_the_function_needs_is_waited_for() -> None:
    helper = "def capped(value):\n    return min(value, 10.0)\n"
    answer = (f"```python\ndef late_fee(days):\n    return capped(days * RATE)\n```\nIt uses a helper:\n"
              f"```python\n{helper}```\n")
    assert read(answer + "That is all.\n" * 10) == (COMPLETE, answer)
    inline = f"def late_fee(days):\n    return capped(days * RATE)\n\n{helper}\n"
    assert read(inline + "print(late_fee(3))\n") == (COMPLETE, inline)


def test_names_of_the_users_module_and_builtins_need_nothing_more() -> None:
    answer = "```python\ndef late_fee(days):\n    return float(len(clean(str(days)))) * RATE\n```\n"
    assert read(answer + "Done.\n") == (COMPLETE, answer)


def test_a_stub_or_a_function_that_does_not_parse_is_not_complete() -> None:
    assert read('```python\ndef late_fee(days):\n    """Fee."""\n    ...\n```\nprose\n')[0] is None
    assert read("```python\ndef late_fee(days):\n    return (days *\n```\nprose\n")[0] is None


def test_another_function_does_not_end_the_answer() -> None:
    assert read("```python\ndef fee(days):\n    return days * RATE\n```\nOr rather:\n")[0] is None


def test_a_prefilled_answer_ends_when_the_model_closes_the_block() -> None:
    start = '```python\ndef late_fee(days):\n    """The fee."""\n'
    end, kept = read("    return min(days * RATE, 10.0)\n```\nThis caps the fee.\n", start=start)
    assert (end, kept) == (COMPLETE, "    return min(days * RATE, 10.0)\n```\n")


def test_a_method_is_complete_inside_its_class() -> None:
    target = AnswerTarget("area", "class Box:\n    def area(self):\n        '''Area.'''\n", "")
    answer = "```python\nclass Box:\n    def area(self):\n        return self.w * self.h\n```\n"
    assert read(answer + "prose\n", target) == (COMPLETE, answer)


def test_a_method_waits_for_a_helper_method_it_calls_on_self() -> None:
    module = 'class Box:\n    def width(self):\n        return 2\n\n    def area(self):\n        """A."""\n'
    target = AnswerTarget("area", module, "")
    head = "```python\nclass Box:\n    def area(self):\n        return self.width() * self._height()\n"
    answer = f"{head}\n    def _height(self):\n        return 3\n```\n"
    assert read(answer + "prose\n", target) == (COMPLETE, answer)


def test_code_inside_a_thinking_section_does_not_end_the_answer() -> None:
    thinking = f"<think>\nMaybe:\n```python\n{FUNCTION}```\nBut the cap...\n"
    assert read(thinking + "more thoughts\n" * 5)[0] is None
    answer = f"{thinking}</think>\n```python\n{FUNCTION}```\n"
    assert read(answer + "prose\n") == (COMPLETE, answer)


def test_copying_the_prompts_context_ends_the_answer() -> None:
    copy = "\n".join(CONTEXT.splitlines()[:COPIED_LINES + 5]) + "\n"
    end, kept = read(f"Sure:\n```python\nimport re\n\n{copy}")
    assert end == COPIED and kept.count("HOLIDAY_") == COPIED_LINES


@pytest.mark.parametrize("before", ["Sure:\n```python\nimport re\n\n", "import re\n\n"],
                         ids=["in a code block", "bare code"])
def test_a_copy_says_where_the_code_it_copies_into_begins(before: str) -> None:
    copy = "\n".join(CONTEXT.splitlines()[:COPIED_LINES + 5]) + "\n"
    watch = streamed(before + copy)
    assert watch.end == COPIED
    assert (before + copy)[:watch.copied_from] == ("Sure:\n" if before.startswith("Sure") else "")


def test_a_copy_into_the_prefilled_code_block_has_no_beginning_to_go_on_from() -> None:
    watch = streamed("\n".join(CONTEXT.splitlines()[:COPIED_LINES + 1]) + "\n", start="```python\n")
    assert watch.end == COPIED and watch.copied_from == -1


def test_a_few_lines_of_the_context_and_its_imports_are_not_a_copy() -> None:
    few = "\n".join(CONTEXT.splitlines()[:COPIED_LINES - 1])
    assert read(f"```python\nimport re\nimport re\n{few}\n\n{FUNCTION}```\n")[0] == COMPLETE


@pytest.mark.parametrize("target", [TARGET, None])
def test_a_loop_ends_the_answer_whatever_the_target(target: AnswerTarget | None) -> None:
    chain = "".join(f'    if days == {n}:\n        return {n / 2}\n' for n in range(300))
    assert read(f"```python\ndef late_fee(days):\n{chain}", target)[0] == LOOPED


def test_without_a_target_only_a_loop_ends_an_answer() -> None:
    assert read(f"```python\n{FUNCTION}```\n" + "Some prose.\n" * 10, None)[0] is None
