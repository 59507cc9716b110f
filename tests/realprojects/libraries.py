"""The real libraries whose source trees `pycapsule check` must judge as `pytest --doctest-modules` does.

Each is a pinned sdist (pip download, SHA-256 checked, cached under $PYCAPSULE_SDIST_CACHE); nothing of
it is installed. Chosen for many doctests, relative imports between their modules, and layouts that
differ: pydash is a src/ layout, boltons declares doctest_optionflags in pytest.ini.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from pycapsule.bench.datasets.sdists import Sdist, source_tree


@dataclass(frozen=True)
class Library:
    sdist: Sdist
    package: str
    """The package's folder, relative to the unpacked tree's top."""
    source_root: str = "."
    """The folder that holds the package (what goes on sys.path), relative to the tree's top."""
    excluded: tuple[str, ...] = ("tests",)
    """Sub-folders of the package that are not library code (its own unit tests)."""
    known: dict[str, str] = field(default_factory=dict)
    """pytest item name (a module's dotted name for an import difference) -> why pycapsule may disagree
    there without it being pycapsule's bug."""

    @property
    def name(self) -> str:
        return self.sdist.name

    def tree(self) -> Path:
        return source_tree(self.sdist)

    def modules(self, tree: Path) -> list[Path]:
        """Every module of the package, its unit-test folders left out."""
        package = tree / self.package
        return sorted(p for p in package.rglob("*.py")
                      if not set(p.relative_to(package).parts[:-1]) & set(self.excluded))

    def dotted_name(self, tree: Path, module: Path) -> str:
        parts = list(module.relative_to(tree / self.source_root).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# Where pycapsule reads a docstring where it is written and doctest reads the objects a module holds after
# import, the two can name the same examples differently, or only one of them sees a definition.
_STATS_FUNCTIONS = ("iqr", "kurtosis", "mean", "median", "median_abs_dev", "rel_std_dev", "skewness",
                    "std_dev", "trimean", "variance")
_MADE_AT_RUN_TIME = ("made at import time (`globals()[name] = func`) with the docstring of "
                     "`Stats._calc_<name>`, whose examples pycapsule runs under that name, where written")
BOLTONS_KNOWN = {
    **{f"boltons.statsutils.{name}": _MADE_AT_RUN_TIME for name in _STATS_FUNCTIONS},
}
MORE_ITERTOOLS_KNOWN = {
    "more_itertools.recipes.pairwise": (
        "defined at import time when itertools.pairwise exists, with `pairwise.__doc__ = _pairwise.__doc__`; "
        "pycapsule runs those examples as `_pairwise`'s, where they are written"),
}

_DOC_ASSIGNED = ("its docstring is assigned after the definition (`f.__doc__ = ...`): doctest reads it from "
                 "the object, pycapsule reads docstrings where a definition holds them")
TOOLZ_KNOWN = {
    **{f"toolz.functoolz.{name}": _DOC_ASSIGNED
       for name in ("has_keywords", "has_varargs", "is_partial_args", "is_valid_args", "num_required_args")},
    **{f"toolz.curried.exceptions.{name}": _DOC_ASSIGNED for name in ("merge", "merge_with")},
}

LIBRARIES = [
    Library(Sdist("pydash", "8.0.4", "a33fb17b4b06c617da5c57c711605d2dc8723311ee5388c8371f87cd44bf4112"),
            package="src/pydash", source_root="src"),
    Library(Sdist("toolz", "1.0.0", "2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02"),
            package="toolz", known=TOOLZ_KNOWN),
    Library(Sdist("more-itertools", "10.5.0",
                  "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6"),
            package="more_itertools", known=MORE_ITERTOOLS_KNOWN),
    Library(Sdist("boltons", "24.1.0", "4a49b7d57ee055b83a458c8682a2a6f199d263a8aa517098bda9bab813554b87"),
            package="boltons", known=BOLTONS_KNOWN),
    # Its readers and writers' doctests write a file by a relative path and read it back.
    Library(Sdist("networkx", "3.6.1", "26b7c357accc0c8cde558ad486283728b65b6a95d85ee1cd66bafab4c8168509"),
            package="networkx/readwrite"),
]


def fetch_all() -> None:
    """For the set-up script: download and unpack every library once (a no-op when cached)."""
    for library in LIBRARIES:
        print(f"{library.name}=={library.sdist.version}: {library.tree()}", file=sys.stderr)


if __name__ == "__main__":
    fetch_all()
