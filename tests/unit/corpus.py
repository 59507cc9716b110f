"""Realistic model replies and the modules they answer, for the extraction -> strip -> splice pipeline.

Each case either must be repaired (then `body_has` / `imports` / `helpers` say what the result
holds and the docstring's doctests must pass) or rejected with a reason containing `rejected`.
"""

from __future__ import annotations

from dataclasses import dataclass

ADD = '''"""Small math helpers."""
import os


def add(a, b):
    """Return the sum of a and b.

    >>> add(1, 2)
    3
    >>> add(-1, 1)
    0
    """
    ...


def other():
    return os.sep
'''

VOWELS_TABS_CRLF = (
    "import string\r\n"
    "\r\n"
    "\r\n"
    "def count_vowels(text):\r\n"
    '\t"""Count the vowels.\r\n'
    "\r\n"
    "\t>>> count_vowels('banana')\r\n"
    "\t3\r\n"
    "\t>>> count_vowels('xyz')\r\n"
    "\t0\r\n"
    '\t"""\r\n'
    "\tpass\r\n"
)

STACK = '''class Stack:
    """A stack."""

    def __init__(self, items):
        self.items = list(items)

    def peek(self):
        """The top item.

        >>> Stack([1, 2]).peek()
        2
        """
        raise NotImplementedError("todo")
'''

ASYNC = '''import asyncio


async def double(x):
    """Twice x, asynchronously.

    >>> asyncio.run(double(4))
    8
    """
'''

DECORATED = '''import functools


@functools.lru_cache(maxsize=None)
def fib(n):
    """The n-th Fibonacci number.

    >>> fib(10)
    55
    """
    pass
'''

INLINE = '''def square(x): """Square it.

    >>> square(3)
    9
    """
'''

PLAIN = '''def mean(numbers):
    """Arithmetic mean of a non-empty list.

    >>> mean([1, 2, 3])
    2.0
    """
    ...
'''

HYPOT = '''def hypot(a, b):
    """Length of the hypotenuse.

    >>> hypot(3, 4)
    5.0
    """
    ...
'''


# Docstrings that hold fenced examples (Markdown, as many libraries write them); a reply repeats them.
SLUG = '''def slug(text: str) -> str:
    """The words of `text`, lower-cased and joined by hyphens.

    ```pycon
    >>> slug("Hello World")
    'hello-world'

    ```
    """
    ...
'''

INITIALS = '''def initials(name):
    """The first letter of each word.

    ~~~pycon
    >>> initials("Ada Lovelace")
    'AL'

    ~~~
    """
'''

FENCE_OF = '''def fence_of(code):
    """A backtick fence `code` cannot close.

    ````pycon
    >>> fence_of("```")
    '````'

    ````
    """
'''

SLUG_BODY = '    return "-".join(text.lower().split())\n'


@dataclass(frozen=True)
class Case:
    id: str
    module: str
    qualname: str
    reply: str
    rejected: str | None = None
    """A substring of the reason when the reply must be rejected."""
    body_has: tuple[str, ...] = ()
    body_lacks: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    """Import lines the new module must hold exactly once."""
    helpers: tuple[str, ...] = ()
    """Helper definitions that must appear before the target."""


FENCE = "```"

CASES = [
    Case(
        "fenced-block",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n{FENCE}\n",
        body_has=("    return a + b\n",),
    ),
    Case(
        "prose-around-fence",
        ADD,
        "add",
        f"Sure! Here is the implementation:\n\n{FENCE}python\ndef add(a, b):\n"
        f'    """Adds."""\n    return a + b\n{FENCE}\n\nThis returns the sum of both numbers.',
        body_has=("return a + b",),
        body_lacks=("Adds.",),
    ),
    Case(
        "several-blocks-pick-definition",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n{FENCE}\nUsage:\n{FENCE}python\n"
        f"print(add(1, 2))  # 3\n{FENCE}\n",
        body_has=("return a + b",),
    ),
    Case(
        "think-tags",
        ADD,
        "add",
        f"<think>Maybe def add(a, b): return a - b? No.</think>\n{FENCE}py\ndef add(a, b):\n"
        f"    return b + a\n{FENCE}",
        body_has=("return b + a",),
        body_lacks=("a - b",),
    ),
    Case(
        "unfenced-code",
        ADD,
        "add",
        "def add(a, b):\n    total = a + b\n    return total\n",
        body_has=("    total = a + b\n",),
    ),
    Case(
        "unfenced-code-in-prose",
        ADD,
        "add",
        "Here you go:\ndef add(a, b):\n    return a + b\n\nIt simply adds.\n",
        body_has=("return a + b",),
    ),
    Case(
        "stray-calls-and-prints",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n\nresult = add(2, 3)\nprint(result)\n"
        f"add(1, 1)\n{FENCE}",
        body_has=("return a + b",),
    ),
    Case(
        "asserts-and-main-guard",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n\nassert add(1, 2) == 3\n\n"
        f'if __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n{FENCE}',
        body_has=("return a + b",),
    ),
    Case(
        "unittest-code",
        ADD,
        "add",
        f"{FENCE}python\nimport unittest\n\ndef add(a, b):\n    return a + b\n\n"
        "class TestAdd(unittest.TestCase):\n    def test_small(self):\n"
        "        self.assertEqual(add(1, 2), 3)\n\n"
        f"unittest.main()\n{FENCE}",
        body_has=("return a + b",),
        body_lacks=("unittest",),
    ),
    Case(
        "humaneval-check-function",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n\ndef check(candidate):\n"
        f"    assert candidate(1, 2) == 3\n\ncheck(add)\n{FENCE}",
        body_has=("return a + b",),
    ),
    Case(
        "main-function",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    return a + b\n\n"
        f"def main():\n    print(add(2, 2))\n\nmain()\n{FENCE}",
        body_has=("return a + b",),
    ),
    Case(
        "renamed-function-recursive",
        ADD,
        "add",
        f"{FENCE}python\ndef plus(a, b):\n    if b == 0:\n        return a\n"
        f"    return plus(a + (1 if b > 0 else -1), b - (1 if b > 0 else -1))\n{FENCE}",
        body_has=("return add(a + ",),
        body_lacks=("plus",),
    ),
    Case(
        "renamed-function-ambiguous",
        ADD,
        "add",
        f"{FENCE}python\ndef plus(a, b):\n    return a + b\n\ndef minus(a, b):\n    return a - b\n{FENCE}",
        rejected="does not define add; it defines minus, plus",
    ),
    Case(
        "renamed-parameters",
        ADD,
        "add",
        f"{FENCE}python\ndef add(x, y):\n    return x + y\n{FENCE}",
        body_has=("return a + b",),
    ),
    Case(
        "renamed-parameter-clashes",
        ADD,
        "add",
        f"{FENCE}python\ndef add(x, y):\n    a = x\n    return a + y\n{FENCE}",
        rejected="cannot be renamed back",
    ),
    Case(
        "extra-parameter",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b, c=0):\n    return a + b + c\n{FENCE}",
        rejected="adds the positional parameter(s) c",
    ),
    Case(
        "missing-parameter",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a):\n    return a\n{FENCE}",
        rejected="drops the positional parameter(s) b",
    ),
    Case(
        "changed-default-kept-header",
        DECORATED,
        "fib",
        f"{FENCE}python\n@functools.cache\ndef fib(n=5):\n"
        f"    return n if n < 2 else fib(n - 1) + fib(n - 2)\n{FENCE}",
        body_has=("fib(n - 1) + fib(n - 2)",),
    ),
    Case(
        "missing-module-import",
        HYPOT,
        "hypot",
        f"{FENCE}python\ndef hypot(a, b):\n    return math.sqrt(a * a + b * b)\n{FENCE}",
        imports=("import math",),
    ),
    Case(
        "import-from-reply-added-once",
        HYPOT,
        "hypot",
        f"{FENCE}python\nimport math\nimport os\n\ndef hypot(a, b):\n    return math.hypot(a, b)\n{FENCE}",
        imports=("import math",),
    ),
    Case(
        "existing-import-not-duplicated",
        ADD,
        "add",
        f"{FENCE}python\nimport os\n\ndef add(a, b):\n    _ = os.sep\n    return a + b\n{FENCE}",
        imports=("import os",),
    ),
    Case(
        "helper-function",
        PLAIN,
        "mean",
        f"{FENCE}python\ndef total(xs):\n    return sum(xs)\n\ndef mean(numbers):\n"
        f"    return total(numbers) / len(numbers)\n{FENCE}",
        helpers=("def total(xs):",),
    ),
    Case(
        "helper-and-constant",
        PLAIN,
        "mean",
        f"{FENCE}python\nSCALE = 1.0\n\ndef _sum(xs):\n    return sum(xs) * SCALE\n\n"
        f"def mean(numbers):\n    return _sum(numbers) / len(numbers)\n\nprint(mean([1]))\n{FENCE}",
        helpers=("SCALE = 1.0", "def _sum(xs):"),
    ),
    Case(
        "typing-name-without-import",
        PLAIN,
        "mean",
        f"{FENCE}python\ndef mean(numbers):\n    values: List[float] = [float(n) for n in numbers]\n"
        f"    return sum(values) / len(values)\n{FENCE}",
        imports=("from typing import List",),
    ),
    Case(
        "method-whole-class",
        STACK,
        "Stack.peek",
        f"{FENCE}python\nclass Stack:\n    def __init__(self, items):\n        self.items = list(items)\n\n"
        f"    def peek(self):\n        return self.items[-1]\n{FENCE}",
        body_has=("        return self.items[-1]\n",),
    ),
    Case(
        "method-as-top-level-def",
        STACK,
        "Stack.peek",
        f"{FENCE}python\ndef peek(self):\n    return self.items[-1]\n{FENCE}",
        body_has=("        return self.items[-1]\n",),
    ),
    Case(
        "method-renamed-single",
        STACK,
        "Stack.peek",
        f"{FENCE}python\nclass Stack:\n    def top(self):\n"
        f"        return self.items[len(self.items) - 1]\n{FENCE}",
        body_has=("return self.items[len(self.items) - 1]",),
    ),
    Case(
        "tabs-crlf-file-spaces-reply",
        VOWELS_TABS_CRLF,
        "count_vowels",
        f"{FENCE}python\ndef count_vowels(text):\n    count = 0\n    for ch in text:\n"
        f"        if ch in 'aeiou':\n            count += 1\n    return count\n{FENCE}",
        body_has=("\tcount = 0\n", "\t\tif ch in 'aeiou':\n", "\t\t\tcount += 1\n"),
    ),
    Case(
        "tabs-reply-spaces-file",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n\tif a == 0:\n\t\treturn b\n\treturn a + b\n{FENCE}",
        body_has=("    if a == 0:\n        return b\n",),
    ),
    Case(
        "multiline-string-kept-verbatim",
        PLAIN,
        "mean",
        f"{FENCE}python\ndef mean(numbers):\n    note = '''first\n  second'''\n"
        f"    return sum(numbers) / len(numbers) + len(note) * 0\n{FENCE}",
        body_has=("    note = '''first\n  second'''\n",),
    ),
    Case(
        "crlf-reply",
        ADD,
        "add",
        "```python\r\ndef add(a, b):\r\n    return a + b\r\n```\r\n",
        body_has=("    return a + b\n",),
    ),
    Case(
        "only-docstring",
        ADD,
        "add",
        f'{FENCE}python\ndef add(a, b):\n    """Return the sum."""\n{FENCE}',
        rejected="has a docstring but no body",
    ),
    Case(
        "still-a-stub",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    # TODO\n    pass\n{FENCE}",
        rejected="still a stub",
    ),
    Case("no-code", ADD, "add", "I cannot help with that request.", rejected="no Python code"),
    Case(
        "syntax-error",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b)\n    return a + b\n{FENCE}",
        rejected="not valid Python",
    ),
    Case(
        "async-target-sync-reply",
        ASYNC,
        "double",
        f"{FENCE}python\ndef double(x):\n    return 2 * x\n{FENCE}",
        body_has=("    return 2 * x\n",),
    ),
    Case(
        "async-target-async-reply",
        ASYNC,
        "double",
        f"{FENCE}python\nasync def double(x):\n    await asyncio.sleep(0)\n    return x * 2\n{FENCE}",
        body_has=("await asyncio.sleep(0)",),
    ),
    Case(
        "sync-target-async-reply",
        ADD,
        "add",
        f"{FENCE}python\nasync def add(a, b):\n    await asyncio.sleep(0)\n    return a + b\n{FENCE}",
        rejected="a coroutine",
    ),
    Case(
        "bare-body-reply",
        ADD,
        "add",
        f"{FENCE}python\nresult = a + b\nreturn result\n{FENCE}",
        body_has=("    result = a + b\n    return result\n",),
    ),
    Case(
        "inline-stub",
        INLINE,
        "square",
        f"{FENCE}python\ndef square(x):\n    return x * x\n{FENCE}",
        body_has=("    return x * x\n",),
    ),
    Case(
        "unclosed-fence-truncated-reply",
        ADD,
        "add",
        f"Here:\n{FENCE}python\ndef add(a, b):\n    return a + b\n",
        body_has=("return a + b",),
    ),
    Case(
        "imports-in-separate-block",
        HYPOT,
        "hypot",
        f"First import:\n{FENCE}python\nimport math\n{FENCE}\nThen:\n{FENCE}python\n"
        f"def hypot(a, b):\n    return math.sqrt(a ** 2 + b ** 2)\n{FENCE}",
        imports=("import math",),
    ),
    Case(
        "reply-comments-kept",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    # plain addition\n    return a + b  # done\n{FENCE}",
        body_has=("    # plain addition\n    return a + b  # done\n",),
    ),
    Case(
        "method-with-helper-method",
        STACK,
        "Stack.peek",
        f"{FENCE}python\nclass Stack:\n    def _last_index(self):\n        return len(self.items) - 1\n\n"
        f"    def peek(self):\n        return self.items[self._last_index()]\n{FENCE}",
        helpers=("    def _last_index(self):\n        return len(self.items) - 1\n",),
    ),
    Case(
        "method-helper-written-as-top-level-function",
        STACK,
        "Stack.peek",
        f"{FENCE}python\ndef _last_index(self):\n    return len(self.items) - 1\n\n\n"
        f"def peek(self):\n    return self.items[self._last_index()]\n{FENCE}",
        helpers=("    def _last_index(self):\n        return len(self.items) - 1\n",),
        body_lacks=("\ndef _last_index",),
    ),
    Case(
        "static-helper-written-as-top-level-function-of-a-class-reply",
        STACK,
        "Stack.peek",
        f"{FENCE}python\ndef _top(items):\n    return items[-1]\n\n\nclass Stack:\n"
        f"    def peek(self):\n        return self._top(self.items)\n{FENCE}",
        helpers=("    @staticmethod\n    def _top(items):\n        return items[-1]\n",),
        body_lacks=("\ndef _top",),
    ),
    Case(
        "await-in-plain-def",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    await thing()\n    return a + b\n{FENCE}",
        rejected="'await' outside async function",
    ),
    Case(
        "nonlocal-without-binding",
        ADD,
        "add",
        f"{FENCE}python\ndef add(a, b):\n    nonlocal total\n    return a + b\n{FENCE}",
        rejected="does not compile",
    ),
    Case(
        "plain-function-answered-as-method",
        ADD,
        "add",
        f"{FENCE}python\nclass Solution:\n    def add(self, a: int, b: int) -> int:\n"
        f"        return a + b\n{FENCE}",
        body_has=("    return a + b\n",),
        body_lacks=("Solution",),
    ),
    Case(
        "method-answer-that-needs-self",
        ADD,
        "add",
        f"{FENCE}python\nclass Solution:\n    def add(self, a, b):\n        return self.plus(a, b)\n\n"
        f"    def plus(self, a, b):\n        return a + b\n{FENCE}",
        rejected="must be a plain function",
    ),
    Case(
        "lambda-assignment",
        ADD,
        "add",
        f"{FENCE}python\nadd = lambda a, b: a + b\n{FENCE}",
        body_has=("a + b",),
    ),
    Case(
        "docstring-fence-repeated",
        SLUG,
        "slug",
        f"Here it is:\n{FENCE}python\n{SLUG.replace('    ...', SLUG_BODY.rstrip())}{FENCE}",
        body_has=(SLUG_BODY,),
    ),
    Case(
        "docstring-fence-unindented-by-the-reply",
        SLUG,
        "slug",
        f"{FENCE}python\n{SLUG.replace('    ...', SLUG_BODY.rstrip()).replace('    ```', '```')}{FENCE}\n",
        body_has=(SLUG_BODY,),
    ),
    Case(
        "docstring-fence-in-an-unfenced-reply",
        SLUG,
        "slug",
        SLUG.replace("    ...", SLUG_BODY.rstrip()),
        body_has=(SLUG_BODY,),
    ),
    Case(
        "docstring-fence-in-an-unterminated-block-after-an-import-block",
        SLUG,
        "slug",
        f"{FENCE}python\nimport re\n{FENCE}\n\n{FENCE}python\n"
        + SLUG.replace("    ...", '    return "-".join(re.findall(r"\\w+", text.lower()))'),
        body_has=('    return "-".join(re.findall(r"\\w+", text.lower()))\n',),
        imports=("import re",),
    ),
    Case(
        "docstring-tilde-fence-in-a-tilde-reply",
        INITIALS,
        "initials",
        f"~~~python\n{INITIALS}    return ''.join(word[0] for word in name.split())\n~~~\n",
        body_has=("    return ''.join(word[0] for word in name.split())\n",),
    ),
    Case(
        "docstring-four-backtick-fence-unindented-by-the-reply",
        FENCE_OF,
        "fence_of",
        f"{FENCE}python\n{FENCE_OF.replace('    ````', '````')}    return '`' * max(3, code.count('`') + 1)\n"
        f"{FENCE}\n",
        body_has=("    return '`' * max(3, code.count('`') + 1)\n",),
    ),
]
