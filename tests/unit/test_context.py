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


# Issue 51 item 4: what a body of the target is likely to use, though nothing in it names it.

_KINDS = ("colour", "country", "currency", "language", "month", "planet", "element", "unit")
_SETTINGS = ("FIRST", "LAST", "WIDTH", "FILL", "CASE", "SEPARATOR", "PREFIX", "SUFFIX")
# Far from the target: tables and settings other functions use, more of them than the budget holds.
FAR_TABLES = "".join(
    f"_{kind.upper()}_NAMES = {{\n" + "".join(f'    "{kind}{i}": "{kind} number {i}",\n' for i in range(12))
    + "}\n" + "".join(f'_{kind.upper()}_{setting} = "{setting.lower()}"\n' for setting in _SETTINGS) + "\n\n"
    f'def {kind}_name(code):\n    """The {kind} name of `code`."""\n'
    f"    name = _{kind.upper()}_NAMES[code]\n"
    + "".join(f"    name = name + _{kind.upper()}_{setting}\n" for setting in _SETTINGS)
    + "    return name\n\n\n"
    f'def {kind}_codes():\n    """Every {kind} code."""\n'
    f"    codes = sorted(_{kind.upper()}_NAMES)\n"
    + "".join(f"    codes.append(_{kind.upper()}_{setting})\n" for setting in _SETTINGS)
    + "    return codes\n\n\n"
    for kind in _KINDS
)
ORDINALS = FAR_TABLES + '''_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def escape(text: str) -> str:
    """The text with &, < and > escaped for HTML."""
    return text.translate(_ESCAPES)


_ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                  "ninth")


def ordinal(n: int) -> str:
    """The English ordinal of a number below ten, for an HTML page: 'third' for 3."""
'''


def test_a_function_sees_the_private_table_beside_it_and_the_translation_table_its_neighbour_uses() -> None:
    context = module_context(capsule_by_qualname(ORDINALS, "ordinal"), budget_chars=4000)
    assert len(context) <= 4000
    assert ('_ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", '
            '"eighth",\n                  "ninth")') in context
    assert '_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})' in context
    assert "def escape(text: str) -> str:\n" in context
    # The far tables fill what is left, not the room the tables beside the target need.
    assert 0 < sum(f"_{kind.upper()}_NAMES = {{" in context for kind in _KINDS) < len(_KINDS)


def _release_class(parser: str) -> str:
    """A class too large to be shown whole, its parser at the top and the target at the bottom."""
    decorator = "    @classmethod\n"
    doc = '        """The version `text` spells."""\n'
    parse = {
        "from_string": f"{decorator}    def from_string(cls, text):\n{doc}"
                       '        return cls(int(part) for part in text.split("."))\n',
        "parse": f"{decorator}    def parse(cls, text):\n{doc}"
                 '        return cls(int(part) for part in text.split("."))\n',
        # neither from_* nor parse*: a classmethod that returns cls(...)
        "of": f"{decorator}    def of(cls, text):\n{doc}"
              '        parts = text.split(".")\n        return cls(int(part) for part in parts)\n',
    }[parser]
    methods = "".join(
        f'    def bump_{i}(self):\n        """Version with part {i} raised."""\n'
        + "".join(f"        step_{j} = {j}\n" for j in range(14)) + "        return self\n\n"
        for i in range(70)
    )
    return (
        'class Release:\n    """A release number such as 1.2.3."""\n\n'
        "    def __init__(self, parts):\n        self.parts = tuple(parts)\n\n"
        f"{parse}\n{methods}"
        "    def __lt__(self, other):\n"
        '        """True when this release comes before `other`, a Release or a string such as \'1.2\'."""\n'
    )


@pytest.mark.parametrize("parser", ["from_string", "parse", "of"])
def test_a_method_of_a_large_class_sees_the_class_parser_it_needs_to_compare(parser: str) -> None:
    context = module_context(capsule_by_qualname(_release_class(parser), "Release.__lt__"), budget_chars=4000)
    assert len(context) <= 4000
    assert context.startswith('# The class the function belongs to\nclass Release:\n')
    assert "    def __init__(self, parts):\n        self.parts = tuple(parts)\n" in context
    # Far from __lt__, kept first, with its docstring line: how to make a Release of a string.
    assert f"    @classmethod\n    def {parser}(cls, text):\n" + '        """The version `text`' in context
    assert "    def bump_69(self):\n" in context  # then the members nearest the target
    assert "def bump_0(" not in context


def _interval_class(methods: int) -> str:
    return (
        "import math\n\n\n"
        'class Interval:\n    """A closed interval of the real line."""\n\n'
        "    def __init__(self, low: float, high: float):\n"
        "        self.low = low\n        self.high = high\n\n"
        "    @classmethod\n    def parse(cls, text: str) -> \"Interval\":\n"
        '        """The interval `text` spells, such as \'[1, 2]\'."""\n'
        '        low, high = text.strip("[]").split(",")\n        return cls(float(low), float(high))\n\n'
        + "".join(f'    def measure_{i}(self) -> float:\n        """Measure number {i}."""\n'
                  f"        return (self.high - self.low) * {i}\n\n" for i in range(methods))
        + "".join(f"\ndef helper_{i}(x):\n    return math.sqrt(x) + {i}\n\n"
                  for i in range(40))
        + '\ndef gap(first: Interval, second: "Interval") -> float:\n'
        '    """The distance between the two intervals (0 when they overlap)."""\n'
    )


@pytest.mark.parametrize("methods", [8, 80], ids=["fits", "too large"])
def test_a_type_named_in_an_annotation_is_shown_with_how_to_build_one(methods: int) -> None:
    context = module_context(capsule_by_qualname(_interval_class(methods), "gap"), budget_chars=4000)
    assert len(context) <= 4000
    assert 'class Interval:\n    """A closed interval of the real line."""\n' in context
    assert "    def __init__(self, low: float, high: float):" in context
    assert '    def parse(cls, text: str) -> "Interval":\n        """The interval `text` spells' in context
    if methods == 8:  # named by the target's signature: whole, though it takes more than a fifth
        assert "    def measure_7(self) -> float:" in context
    else:  # its constructors and parsers, its other methods by name
        assert "def measure_0(" not in context
        assert "    # and measure_0, measure_1, measure_2," in context


def test_the_settings_default_budget_is_the_context_modules_own() -> None:
    from pycapsule.config import Settings
    from pycapsule.context import DEFAULT_BUDGET_CHARS

    assert Settings().context_chars == DEFAULT_BUDGET_CHARS


def test_a_budget_of_nothing_shows_nothing() -> None:
    capsule = capsule_by_qualname(MODULE, "ring_area")
    assert module_context(capsule) and module_context(capsule, 0) == ""
