"""Examples run again with an iterator where the function takes any iterable: which examples, and what the
loop does with a body that passes its examples on lists but fails on an iterator (the real openai client,
the scripted server, the real default sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.debugging.iterator_examples import iterator_examples
from pycapsule.sandbox.api import Sandbox

from tests.engine.test_loop import finished_attempts, run
from tests.fakes.openai_server import FakeOpenAI

LAST = '''def last(iterable, default=None):
    """The last item of `iterable`, or `default` when it is empty.

    >>> last([0, 1, 2, 3])
    3
    >>> last([], 'none')
    'none'
    """
    ...
'''

INDEXES = ("```python\ndef last(iterable, default=None):\n    return iterable[-1] if iterable else default\n"
           "```")
READS_ONCE = ("```python\ndef last(iterable, default=None):\n    item = default\n    for item in iterable:\n"
              "        pass\n    return item\n```")


def examples_of(source: str, qualname: str) -> str | None:
    found = iterator_examples(capsule_by_qualname(source, qualname))
    return None if found is None else found.docstring


def test_a_literal_given_to_a_parameter_named_iterable_becomes_an_iterator() -> None:
    assert examples_of(LAST, "last") == (
        ">>> last(iter([0, 1, 2, 3]))\n3\n\n>>> last(iter([]), 'none')\n'none'\n")


def test_annotations_decide_over_names_and_keywords_and_directives_are_kept() -> None:
    source = '''from typing import Iterable, Optional

def total(xs: "Optional[Iterable[int]]", iterable: list, *, start: Iterable[int] = ()) -> int:
    """
    >>> total(range(3), [1], start={4, 5})  # doctest: +ELLIPSIS
    12
    """
'''
    assert examples_of(source, "total") == (
        ">>> total(iter(range(3)), [1], start=iter({4, 5}))  # doctest: +ELLIPSIS\n12\n")


def test_strings_and_dicts_are_left_as_they_are() -> None:
    """Libraries treat a string as one item or search it for substrings, and a dict iterates over its keys
    only: an iterator over either is not the same argument."""
    source = '''def index(iterable, value):
    """
    >>> index('ABCDAB', 'AB')
    [0, 4]
    >>> index({'a': 1}, 'a')
    [0]
    """
'''
    assert examples_of(source, "index") is None


def test_a_name_the_examples_bound_to_a_literal_becomes_an_iterator_until_it_is_bound_otherwise() -> None:
    source = '''def one(iterable):
    """
    >>> it = ['x']
    >>> one(it)
    'x'
    >>> it = make()
    >>> one(it)
    'x'
    """
'''
    assert examples_of(source, "one") == (
        ">>> it = ['x']\n\n>>> one(iter(it))\n'x'\n\n>>> it = make()\n\n>>> one(it)\n'x'\n")


def test_other_names_numbers_and_generators_are_left_as_they_are() -> None:
    source = '''def first(iterable, default=None):
    """
    >>> first(xs)
    1
    >>> first(x for x in 'ab')
    'a'
    >>> first(5, 0)
    0
    """
'''
    assert examples_of(source, "first") is None


def test_an_argument_inside_another_is_wrapped_once_at_the_outside() -> None:
    source = '''def flat(iterable):
    """
    >>> flat([flat([[1]]), [2]])
    [1, 2]
    """
'''
    assert examples_of(source, "flat") == ">>> flat(iter([flat([[1]]), [2]]))\n[1, 2]\n"


def test_a_method_skips_self_unless_called_on_its_class() -> None:
    source = '''class Box:
    def put_all(self, iterable):
        """
        >>> box = Box()
        >>> box.put_all([1, 2])
        2
        >>> Box.put_all(box, (3, 4))
        4
        """
'''
    assert examples_of(source, "Box.put_all") == (
        ">>> box = Box()\n\n>>> box.put_all(iter([1, 2]))\n2\n\n>>> Box.put_all(box, iter((3, 4)))\n4\n")


def test_a_function_that_takes_no_iterable_has_none() -> None:
    source = '''def head(seq):
    """
    >>> head([1])
    1
    """
'''
    assert examples_of(source, "head") is None


@pytest.fixture
def last_file(tmp_path: Path) -> Path:
    (tmp_path / "last.py").write_text(LAST)
    return tmp_path / "last.py"


def test_an_answer_that_fails_only_on_an_iterator_is_asked_again_naming_the_failure(
        openai_server: FakeOpenAI, sandbox: Sandbox, last_file: Path) -> None:
    openai_server.queue(INDEXES, READS_ONCE)
    events, outcome = run(openai_server, sandbox, last_file, "last")
    assert outcome.status == "passed" and outcome.attempts == 2
    assert "for item in iterable" in (outcome.new_source or "")
    first = finished_attempts(events)[0]
    assert not first.passed
    assert first.headline == ("fails with an iterator for `iterable`: last(iter([0, 1, 2, 3])) raised "
                              "TypeError: 'list_iterator' object is not subscriptable")
    assert first.headline in openai_server.chat_requests[1].messages[-1]["content"]


def test_a_fix_prompt_says_the_examples_pass_and_what_an_iterator_cannot_do(
        openai_server: FakeOpenAI, sandbox: Sandbox, last_file: Path) -> None:
    openai_server.queue(INDEXES, READS_ONCE)
    _, outcome = run(openai_server, sandbox, last_file, "last", restart_after=1)
    assert outcome.status == "passed" and outcome.attempts == 2
    fix = openai_server.chat_requests[1].messages[-1]["content"]
    assert ("The examples pass as written, but `iterable` may be any iterable, and they fail when it is an "
            "iterator, which can be read only once and has no len() and no indexing:\n"
            "last(iter([0, 1, 2, 3])) raised TypeError: 'list_iterator' object is not subscriptable") in fix


def test_when_no_answer_works_on_an_iterator_the_first_that_passes_the_examples_is_applied(
        openai_server: FakeOpenAI, sandbox: Sandbox, last_file: Path) -> None:
    openai_server.queue(INDEXES, INDEXES.replace("iterable[-1]", "list(iterable)[-1]").replace(
        "if iterable", "if len(iterable)"), INDEXES)
    events, outcome = run(openai_server, sandbox, last_file, "last")
    assert [a.passed for a in finished_attempts(events)] == [False, False, False]
    assert outcome.status == "passed"
    assert "return iterable[-1] if iterable else default" in (outcome.new_source or "")
    assert outcome.message.startswith("last: 2 examples pass, but it fails with an iterator for `iterable`: ")


def test_turned_off_the_examples_as_written_decide(
        openai_server: FakeOpenAI, sandbox: Sandbox, last_file: Path) -> None:
    openai_server.queue(INDEXES)
    _, outcome = run(openai_server, sandbox, last_file, "last", iterator_examples=False)
    assert outcome.status == "passed" and outcome.attempts == 1


def test_a_body_the_user_wrote_is_judged_by_its_examples_only(
        openai_server: FakeOpenAI, sandbox: Sandbox, last_file: Path) -> None:
    last_file.write_text(LAST.replace("    ...\n", "    return iterable[-1] if iterable else default\n"))
    _, outcome = run(openai_server, sandbox, last_file, "last", from_current_body=True)
    assert outcome.status == "passed" and outcome.attempts == 0
    assert "already pass" in outcome.message
    assert openai_server.chat_requests == []
