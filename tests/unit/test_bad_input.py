"""Garbage in: a one-sentence error, never a traceback."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pycapsule.capsule import CapsuleError, capsule_by_qualname, read_capsules
from pycapsule.context import module_context
from pycapsule.debugging import UnusableReply
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import extract_code
from pycapsule.debugging.signature import splice

FRAGMENTS = [
    "def add(a, b):", "def add(x):", "async def add(a, b):", "class C:", "def plus(a, b):", "\n", "\n    ",
    "\n\t", "return a + b", "return add(a, b)", "pass", "...", '"""doc"""', "'''", "```python\n", "```\n",
    "<think>", "</think>", "import math", "from typing import List", "print(add(1, 2))", "assert add(1,2)",
    "if __name__ == '__main__':", "nonlocal q", "global a", "await x", "yield 1", "lambda: 0", "@property",
    "    ", "(", ")", ":", "\r\n", "é", "\x00", "\\", "#", "a = [", "]", "self.items",
    "raise NotImplementedError", "def add(self, a, b):\n    return a - b\n",
]
python_like = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
anything = st.one_of(python_like, st.text(max_size=200))

MODULE = (
    '"""M."""\nimport os\n\n\nclass C:\n    def add(self, a, b):\n'
    '        """>>> C().add(1, 2)\n        3\n        """\n'
)


@settings(max_examples=400, deadline=None)
@given(anything)
def test_replies_are_used_or_refused_with_a_reason(reply: str) -> None:
    capsule = capsule_by_qualname(MODULE, "C.add")
    try:
        code = strip_example_calls(extract_code(reply, "add"), "add")
        result = splice(capsule, code)
    except UnusableReply as error:
        assert error.reason.endswith(".")
        return
    compile(result.new_source, "m.py", "exec")
    assert result.new_source.startswith(MODULE[: capsule.body_start])


@settings(max_examples=300, deadline=None)
@given(anything)
def test_any_module_text_reads_or_gives_a_capsule_error(source: str) -> None:
    try:
        capsules = read_capsules(source)
    except CapsuleError as error:
        assert error.message.endswith(".")
        return
    for capsule in capsules:
        assert capsule.header_start <= capsule.body_start <= capsule.body_end <= len(source)
        module_context(capsule, budget_chars=500)
