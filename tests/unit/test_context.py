"""The module context a prompt gets: what the body is likely to use, within the budget, and nothing
the model could take for the function it has to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context
from pycapsule.prompts import generate_messages

MODULE = '''import math
from dataclasses import dataclass

from geometry import Point

RADIUS = 2.5


@dataclass
class Circle:
    """A circle on the plane.

    With a long explanation that is not needed.
    """
    center: Point
    radius: float = RADIUS

    def area(self) -> float:
        """The area."""
        return math.pi * self.radius ** 2

    def _private(self):
        return 0


def unrelated(x):
    """Never mentioned."""
    return x


def ring_area(outer: Circle, inner: Circle) -> float:
    """The area between two circles with the same centre (uses RADIUS by default).

    >>> ring_area(Circle(Point(0, 0), 2), Circle(Point(0, 0), 1))
    9.42...
    """
'''

GEOMETRY = '''class Point:
    """A 2-D point."""

    def __init__(self, x: float, y: float):
        self.x = x
        self.y = y
'''

# A package: `english/nouns.py` imports a helper from its sibling `english/text.py` with a relative
# import; its `plural` needs the module's table and helper, which its docstring never names.
TEXT = '''"""Text helpers."""


def normalise(word: str) -> str:
    """The word in lower case, without surrounding spaces."""
    return word.strip().lower()
'''

NOUNS = '''"""English nouns."""

from .text import normalise

IRREGULAR = {
    "child": "children",
    "mouse": "mice",
    "person": "people",
}
SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")
NOTE = """
Not for the model.
"""


def _takes_es(word: str) -> bool:
    """True when the plural of `word` ends in -es."""
    return word.endswith(SIBILANT_ENDINGS)


def singular(word: str) -> str:
    """The singular of an English noun."""
    word = normalise(word)
    for one, many in IRREGULAR.items():
        if word == many:
            return one
    return word[:-2] if word.endswith("es") else word.rstrip("s")


def plural(word: str) -> str:
    """The plural of an English noun.

    >>> plural("Box")
    'boxes'
    >>> plural("child")
    'children'
    """
'''

ACCOUNT = '''FEES = {
    "basic": 1,
    "gold": 0,
}


class Account:
    """A bank account."""

    LIMIT = 1000

    def __init__(self, owner, plan="basic"):
        self.owner = owner
        self.plan = plan
        self.balance = 0

    def _fee(self) -> int:
        """The fee the plan takes on each deposit."""
        return FEES[self.plan]

    def _check(self, amount):
        self.last_checked = amount
        if amount > self.LIMIT:
            raise ValueError("too much")

    def _audit(self, entries):
        total = 0
        for entry in entries:
            total += entry
        total += 0
        total += 1
        total += 2
        total += 3
        total += 4
        total += 5
        total += 6
        total += 7
        self.audited = True
        self.audit_total = total
        return total

    @property
    def rich(self) -> bool:
        return self.balance > 100

    def deposit(self, amount):
        """Add money, less the plan's fee; the new balance.

        >>> Account("a").deposit(5)
        4
        """
'''


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "english"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "text.py").write_text(TEXT)
    (folder / "nouns.py").write_text(NOUNS)
    return folder


def test_imports_come_first_then_the_named_definitions(tmp_path: Path) -> None:
    (tmp_path / "geometry.py").write_text(GEOMETRY)
    capsule = capsule_by_qualname(MODULE, "ring_area", tmp_path / "shapes.py")
    context = module_context(capsule)
    assert context.startswith("# The module's imports\nimport math\nfrom dataclasses import dataclass\n")
    assert "class Circle:" in context
    assert '    """A circle on the plane."""' in context
    assert "With a long explanation" not in context
    assert "    center: Point" in context
    assert "    def area(self) -> float:" in context
    assert "_private" not in context  # another class's private methods are not the target's to call
    assert "RADIUS = 2.5" in context
    assert "# from geometry.py\nclass Point:" in context
    assert "A 2-D point." in context


def test_a_function_that_needs_a_module_table_sees_it_whole(package: Path) -> None:
    capsule = capsule_by_qualname(NOUNS, "plural", package / "nouns.py")
    context = module_context(capsule)
    table = 'IRREGULAR = {\n    "child": "children",\n    "mouse": "mice",\n    "person": "people",\n}'
    assert table in context
    assert 'SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")' in context
    assert "Not for the model" not in context  # a string no code names is a note, not a table


@pytest.mark.parametrize("import_line", ["from .text import normalise", "from english.text import normalise"])
def test_a_function_that_needs_a_module_helper_sees_it_and_its_siblings_names(
        package: Path, import_line: str) -> None:
    (package.parent.parent / "pyproject.toml").write_text("[project]\nname = 'english'\n")  # a src/ layout
    source = NOUNS.replace("from .text import normalise", import_line)
    capsule = capsule_by_qualname(source, "plural", package / "nouns.py")
    context = module_context(capsule)
    assert (
        'def _takes_es(word: str) -> bool:\n    """True when the plural of `word` ends in -es."""\n'
        "    return word.endswith(SIBILANT_ENDINGS)"
    ) in context
    # The import resolved through jedi to the sibling module's definition, read from that file.
    assert (
        '# from text.py\ndef normalise(word: str) -> str:\n'
        '    """The word in lower case, without surrounding spaces."""\n'
        "    return word.strip().lower()"
    ) in context
    assert "def singular(word: str) -> str:" in context


def test_a_neighbour_never_has_a_body_the_model_could_complete(package: Path) -> None:
    capsule = capsule_by_qualname(NOUNS, "plural", package / "nouns.py")
    context = module_context(capsule)
    lines = context.split("\n")
    assert sum(line.startswith("def ") for line in lines) >= 2
    for number, line in enumerate(lines):
        assert line.strip() not in ("...", "pass")
        if line.lstrip().startswith("def "):
            assert lines[number + 1].startswith(" " * (len(line) - len(line.lstrip()) + 4))
    assert "def plural" not in context


STUBS = '''class Stack:
    def push(self, item):
        """Put item on top."""
        ...

    def size(self) -> int:
        """How many items.

        >>> Stack().size()
        0
        """
        ...


def is_empty(stack: Stack) -> bool:
    """True when nothing is on the stack."""
    raise NotImplementedError


def top(stack: Stack,
        default=None):
    """The top item, or default.

    >>> top(Stack(), 1)
    1
    """
    ...
'''


@pytest.mark.parametrize("target", ["top", "Stack.size"])
def test_other_stubs_of_the_file_are_one_comment_line_each_never_a_def_to_complete(target: str) -> None:
    context = module_context(capsule_by_qualname(STUBS, target))
    summary = "True when nothing is on the stack."
    assert f"def is_empty(stack: Stack) -> bool  (not written yet: {summary})" in context
    if target == "Stack.size":  # its own class, whose methods are shown with their bodies
        assert "def push(self, item)  (not written yet: Put item on top.)" in context
    else:  # another class: its methods' signatures and summaries, never a body
        assert 'def push(self, item):\n        """Put item on top."""' in context
    assert "NotImplementedError" not in context
    assert not any(line.strip() in ("...", "pass") for line in context.split("\n"))


def test_a_long_neighbour_shows_its_first_body_lines_and_how_many_are_left_out() -> None:
    steps = "".join(f"    total += {i}\n" for i in range(20))
    source = (f'def accumulate(xs):\n    """Add up, slowly."""\n    total = 0\n{steps}    return total\n\n\n'
              'def mean(xs):\n    """The mean of xs, using accumulate."""\n')
    context = module_context(capsule_by_qualname(source, "mean"))
    assert context == (
        'def accumulate(xs):\n    """Add up, slowly."""\n    total = 0\n    total += 0\n    total += 1\n'
        "    # ... 19 more lines ..."  # total += 2 to 19, and the return
    )


def test_a_method_sees_its_whole_class_private_methods_and_attributes_included(tmp_path: Path) -> None:
    capsule = capsule_by_qualname(ACCOUNT, "Account.deposit", tmp_path / "bank.py")
    context = module_context(capsule)
    own_class = context[context.index("# The class the function belongs to\n"):]
    assert own_class.startswith(
        '# The class the function belongs to\nclass Account:\n    """A bank account."""\n')
    assert "    LIMIT = 1000" in own_class
    assert "    def __init__(self, owner, plan=\"basic\"):\n        self.owner = owner\n" in own_class
    assert "        self.balance = 0" in own_class
    assert (
        '    def _fee(self) -> int:\n        """The fee the plan takes on each deposit."""\n'
        "        return FEES[self.plan]"
    ) in own_class
    assert "    def _check(self, amount):\n        self.last_checked = amount\n" in own_class
    audit = "    def _audit(self, entries):\n        total = 0\n        for entry in entries:\n"
    assert audit + "            total += entry\n        # ... 11 more lines ...\n" \
        "        # sets self.audited, self.audit_total" in own_class
    assert "    @property\n    def rich(self) -> bool:" in own_class
    assert "def deposit" not in context  # the target is the task, not a neighbour
    # The table the class's methods use, though the target's docstring never names it.
    assert 'FEES = {\n    "basic": 1,\n    "gold": 0,\n}' in context


def test_the_prompt_for_a_method_holds_its_class_and_the_table(tmp_path: Path) -> None:
    capsule = capsule_by_qualname(ACCOUNT, "Account.deposit", tmp_path / "bank.py")
    prompt = generate_messages(capsule, module_context(capsule))[-1]["content"]
    context, task = prompt.split("Complete this Python function", 1)
    assert "(it is `Account.deposit`, defined inside `Account`)" in task
    assert "def deposit(self, amount):" in task
    assert "def _fee(self) -> int:" in context and "FEES = {" in context


def test_a_long_table_shows_its_first_lines_and_says_how_many_are_left_out() -> None:
    rows = "".join(f'    "k{i}": {i},\n' for i in range(100))
    source = f'CODES = {{\n{rows}}}\n\n\ndef code(name):\n    """The code of `name`."""\n'
    context = module_context(capsule_by_qualname(source, "code"))
    assert context.startswith('CODES = {\n    "k0": 0,\n')
    assert '    "k26": 26,\n    # ... 73 more lines ...\n}' in context  # k27 to k99
    assert '"k99"' not in context


def test_the_budget_is_respected_most_relevant_first() -> None:
    capsule = capsule_by_qualname(MODULE, "ring_area")
    small = module_context(capsule, budget_chars=120)
    assert len(small) <= 120
    assert small.startswith("# The module's imports")
    assert module_context(capsule, budget_chars=10) == ""
    # What the docstring names comes before what only sits near the target.
    medium = module_context(capsule, budget_chars=300)
    assert "class Circle:" in medium and "def unrelated" not in medium
    assert "def unrelated(x):" in module_context(capsule)


def test_names_not_from_the_project_are_left_out() -> None:
    capsule = capsule_by_qualname(MODULE, "ring_area")  # no path: nothing to resolve imports against
    assert "# from geometry.py" not in module_context(capsule)


def test_a_single_function_with_its_imports_keeps_the_benchmark_prompt_shape() -> None:
    source = 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """Sum.\n\n'
    context = module_context(capsule_by_qualname(source + '    >>> total([1])\n    1\n    """\n', "total"))
    assert context == "# The module's imports\nfrom typing import List"


def test_a_method_of_a_large_class_sees_the_members_nearest_it_within_the_budget() -> None:
    methods = "".join(
        f"    def step_{i}(self, value):\n        \"\"\"Step {i}.\"\"\"\n"
        + "".join(f"        value += {j}\n" for j in range(12)) + "        return value\n\n"
        for i in range(60)
    )
    sets = "".join(f"        self.scale_{i} = scale\n" for i in range(14))
    init = f"    def __init__(self, scale):\n{sets}"
    source = (f"class Pipeline:\n    \"\"\"Many steps.\"\"\"\n\n{init}\n{methods}"
              "    def run(self, value):\n        \"\"\"All the steps.\"\"\"\n\n"
              + methods.replace("step_", "late_"))
    context = module_context(capsule_by_qualname(source, "Pipeline.run"), budget_chars=2000)
    assert context.startswith('# The class the function belongs to\nclass Pipeline:\n    """Many steps."""\n')
    assert len(context) <= 2000
    assert "    def step_59(self, value):\n        # ... 14 more lines ...\n" in context
    assert "    def late_0(self, value):" in context
    assert "def step_0(" not in context and "def late_59(" not in context
    # Far from the target, but it says which attributes exist.
    assert "    def __init__(self, scale):\n        self.scale_0 = scale\n" in context
