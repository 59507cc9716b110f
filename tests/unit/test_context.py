"""The module context a prompt gets: imports first, then what the target names, within the budget."""

from __future__ import annotations

from pathlib import Path

from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context

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
    assert "_private" not in context
    assert "unrelated" not in context
    assert "RADIUS = 2.5" in context
    assert "# from geometry.py\nclass Point:" in context
    assert "A 2-D point." in context


def test_a_method_sees_its_own_class_first_with_init_in_full() -> None:
    source = (
        "class Account:\n    def __init__(self, owner):\n        self.owner = owner\n"
        "        self.balance = 0\n\n"
        "    def deposit(self, amount):\n        '''Add money.\n\n        >>> Account('a').deposit(5)\n"
        "        5\n        '''\n"
    )
    context = module_context(capsule_by_qualname(source, "Account.deposit"))
    assert context.startswith("# The class the function belongs to\nclass Account:\n")
    assert "        self.balance = 0" in context


def test_the_budget_is_respected_most_relevant_first() -> None:
    capsule = capsule_by_qualname(MODULE, "ring_area")
    small = module_context(capsule, budget_chars=120)
    assert len(small) <= 120
    assert small.startswith("# The module's imports")
    assert module_context(capsule, budget_chars=10) == ""


def test_names_not_from_the_project_are_left_out() -> None:
    capsule = capsule_by_qualname(MODULE, "ring_area")  # no path: nothing to resolve imports against
    assert "# from geometry.py" not in module_context(capsule)
