"""An answer that repeats the function's signature and docstring as the task shows them is ended after a few
lines of it, with the rest of the head as the answer would go on: the model reads that rest instead of
writing it. An answer that leaves the head, a head too short to be worth it, or a prefilled answer is read
as it comes."""

from __future__ import annotations

from pycapsule.debugging.answer_watch import COMPLETE, ECHOED, AnswerTarget, AnswerWatch
from pycapsule.debugging.echo import ECHO_LINES, head_from_def

MODULE = '''RATE = 0.5


def late_fee(days: int) -> float:
    """The fee for returning a book `days` late: half a unit a day,
    capped at 10.0 after 20 days.

    >>> late_fee(3)
    1.5
    >>> late_fee(30)
    10.0
    >>> late_fee(0)
    0.0
    """
'''
HEAD = MODULE[MODULE.index("def late_fee"):].rstrip()
TARGET = AnswerTarget("late_fee", MODULE, "", HEAD)
BODY = "    return min(days * RATE, 10.0)\n"


def read(text: str, target: AnswerTarget = TARGET, start: str = "") -> AnswerWatch:
    watch = AnswerWatch(target, start)
    for index in range(0, len(text), 7):
        if watch.feed(text[index:index + 7]) is not None:
            break
    return watch


def test_an_answer_repeating_the_head_is_ended_with_the_rest_of_the_head() -> None:
    answer = f"Sure:\n```python\n{HEAD}\n{BODY}```\n"
    watch = read(answer)
    assert watch.end == ECHOED
    kept = answer[:watch.kept]
    head_lines = HEAD.split("\n")
    assert kept == "Sure:\n```python\n" + "\n".join(head_lines[:ECHO_LINES]) + "\n"
    assert kept + watch.echo_rest == f"Sure:\n```python\n{HEAD}\n", "the rest goes on where it stopped"


def test_the_rest_follows_the_answers_indentation_not_the_modules() -> None:
    method = '''class Library:
    def late_fee(self, days: int) -> float:
        """The fee for returning a book `days` late: half a unit a day,
        capped at 10.0 after 20 days.

        >>> Library().late_fee(3)
        1.5
        >>> Library().late_fee(30)
        10.0
        """
'''
    head = method[method.index("    def late_fee"):].rstrip()
    target = AnswerTarget("late_fee", method, "", head)
    dedented = "\n".join(line[4:] for line in head.split("\n"))
    watch = read(f"```python\n{dedented}\n    return 1.5\n```\n", target)
    assert watch.end == ECHOED
    assert watch.echo_rest.split("\n")[-3:] == ["    10.0", '    """', ""], "shifted left as the answer is"


def test_an_answer_that_leaves_the_head_is_read_on() -> None:
    changed = HEAD.replace("half a unit a day,", "a fee per day,")
    watch = read(f"```python\n{changed}\n{BODY}```\n")
    assert watch.end == COMPLETE and watch.echo_rest == ""


def test_a_short_rest_is_not_worth_a_second_request() -> None:
    short = '''def double(x):
    """Twice x.

    >>> double(2)
    4
    """
'''
    target = AnswerTarget("double", short, "", short.rstrip())
    watch = read(f"```python\n{short}    return 2 * x\n```\n", target)
    assert watch.end == COMPLETE


def test_an_answer_prefilled_with_the_head_is_not_ended_for_repeating_it() -> None:
    watch = read(f"{BODY}```\n", start=f"```python\n{HEAD}\n")
    assert watch.end == COMPLETE


def test_without_a_head_to_give_nothing_is_ended_for_repeating() -> None:
    watch = read(f"```python\n{HEAD}\n{BODY}```\n", AnswerTarget("late_fee", MODULE, ""))
    assert watch.end == COMPLETE


def test_the_head_is_matched_from_its_def_line_so_decorators_may_be_left_out() -> None:
    assert head_from_def("@cache\ndef f(x):\n    '''Doc.'''")[0] == "def f(x):"
    assert head_from_def("x = 1") == []
