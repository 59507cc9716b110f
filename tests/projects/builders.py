"""Small synthetic projects, written into a folder, in the layouts real code uses.

Each builder writes its files under `root` and returns the path of the module the tests aim at.
Every module here passes `pytest --doctest-modules` as written (test_fixtures_are_valid proves it),
so any disagreement with pycapsule is pycapsule's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from textwrap import dedent


def write_tree(root: Path, files: dict[str, str], newline: str = "\n") -> None:
    """Write `files` (relative path -> text, dedented) under `root`, with `newline` line endings."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(dedent(text).lstrip("\n").replace("\n", newline).encode("utf-8"))


PRICING = '''
    from . import sibling
    from .core import TAX


    def _round_money(amount):
        return round(amount, 2)


    def gross(net):
        """The price with tax.

        >>> gross(10)
        12.0
        """
        return _round_money(net * (1 + TAX))


    def twice_gross(net):
        """
        >>> twice_gross(10)
        24.0
        """
        return sibling.double(gross(net))
'''


def package_with_relative_imports(root: Path) -> Path:
    """`shop/pricing.py` imports `from .core import TAX` and `from . import sibling`;
    `shop/reports/summary.py` reaches two levels up with `from ..core import TAX`."""
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "shop"\nversion = "0"\n',
        "shop/__init__.py": "",
        "shop/core.py": "TAX = 0.2\n",
        "shop/sibling.py": "def double(x):\n    return 2 * x\n",
        "shop/pricing.py": PRICING,
        "shop/reports/__init__.py": "",
        "shop/reports/summary.py": '''
            from ..core import TAX


            def tax_line():
                """
                >>> tax_line()
                'tax: 20%'
                """
                return f"tax: {TAX:.0%}"
        ''',
    })
    return root / "shop" / "pricing.py"


def pricing_stub() -> str:
    """`shop/pricing.py` with `gross` left as a stub: its body must use the relative import and the helper."""
    source = dedent(PRICING).lstrip("\n")
    stub = source.replace("    return _round_money(net * (1 + TAX))\n", "    ...\n")
    assert stub != source
    return stub


def loose_folder_with_a_sibling_module(root: Path) -> Path:
    """`scripts/report.py` does `import helpers` and `from helpers import shout` by plain name: no
    `__init__.py`, no project file; the file's own folder is where its siblings are found."""
    write_tree(root, {
        "scripts/helpers.py": "PREFIX = '>> '\n\n\ndef shout(text):\n    return text.upper()\n",
        "scripts/report.py": '''
            import helpers
            from helpers import shout


            def headline(text):
                """
                >>> headline("done")
                '>> DONE'
                """
                return helpers.PREFIX + shout(text)
        ''',
    })
    return root / "scripts" / "report.py"


def src_layout(root: Path) -> Path:
    """`src/demo/text.py` imports its own package absolutely (`from demo.util import ...`) and
    relatively; pyproject.toml declares `src` as where the packages are."""
    write_tree(root, {
        "pyproject.toml": '''
            [project]
            name = "demo"
            version = "0"

            [tool.setuptools.packages.find]
            where = ["src"]
        ''',
        "src/demo/__init__.py": "",
        "src/demo/util.py": "def slug_char(c):\n    return c if c.isalnum() else '-'\n",
        "src/demo/_words.py": "SEPARATOR = '-'\n",
        "src/demo/text.py": '''
            from demo.util import slug_char

            from ._words import SEPARATOR


            def slug(title):
                """
                >>> slug("Hello, World")
                'hello--world'
                """
                return "".join(slug_char(c) for c in title.lower()).replace(" ", SEPARATOR)
        ''',
    })
    return root / "src" / "demo" / "text.py"


def setuptools_package_dir(root: Path) -> Path:
    """A package under `lib/` declared with setuptools' `package-dir = {"" = "lib"}`."""
    write_tree(root, {
        "pyproject.toml": '''
            [project]
            name = "calc"
            version = "0"

            [tool.setuptools]
            package-dir = {"" = "lib"}

            [tool.pytest.ini_options]
            pythonpath = ["lib"]
        ''',
        "lib/calc/__init__.py": "",
        "lib/calc/constants.py": "ANSWER = 42\n",
        "lib/calc/ops.py": '''
            from calc.constants import ANSWER


            def answer_plus(n):
                """
                >>> answer_plus(1)
                43
                """
                return ANSWER + n
        ''',
    })
    return root / "lib" / "calc" / "ops.py"


def pytest_pythonpath(root: Path) -> Path:
    """`[tool.pytest.ini_options] pythonpath = ["vendor"]`: a module imports a top-level name from there."""
    write_tree(root, {
        "pyproject.toml": '''
            [project]
            name = "app"
            version = "0"

            [tool.pytest.ini_options]
            pythonpath = ["vendor"]
        ''',
        "vendor/tinyfmt.py": "def bracket(text):\n    return '[' + text + ']'\n",
        "app/__init__.py": "",
        "app/view.py": '''
            import tinyfmt


            def label(name):
                """
                >>> label("ok")
                '[ok]'
                """
                return tinyfmt.bracket(name)
        ''',
    })
    return root / "app" / "view.py"


def namespace_package(root: Path) -> Path:
    """`src/acme` has no `__init__.py` (a namespace package); `acme.widgets.shapes` imports across it,
    absolutely (`acme.gadgets`) and relatively (`..gadgets`)."""
    write_tree(root, {
        "pyproject.toml": '''
            [project]
            name = "acme-widgets"
            version = "0"

            [tool.setuptools.packages.find]
            where = ["src"]
            namespaces = true

            [tool.pytest.ini_options]
            pythonpath = ["src"]
            consider_namespace_packages = true
        ''',
        "src/acme/gadgets/__init__.py": "CM_PER_INCH = 2.54\n",
        "src/acme/widgets/__init__.py": "",
        "src/acme/widgets/shapes.py": '''
            import acme.gadgets

            from ..gadgets import CM_PER_INCH


            def inches_to_cm(inches):
                """
                >>> inches_to_cm(10)
                25.4
                >>> __name__
                'acme.widgets.shapes'
                """
                assert CM_PER_INCH == acme.gadgets.CM_PER_INCH
                return round(inches * CM_PER_INCH, 2)
        ''',
    })
    return root / "src" / "acme" / "widgets" / "shapes.py"


def loose_script(root: Path) -> Path:
    """A script in a folder of its own, reading a data file next to it through `__file__`, with a
    `__main__` block that must not run."""
    write_tree(root, {
        "words.txt": "alpha\nbeta\n",
        "count_words.py": '''
            import sys
            from pathlib import Path

            WORDS = Path(__file__).with_name("words.txt").read_text().split()


            def count():
                """
                >>> count()
                2
                >>> __name__
                'count_words'
                """
                return len(WORDS)


            if __name__ == "__main__":
                sys.exit("the __main__ block ran")
        ''',
    })
    return root / "count_words.py"


def relative_import_with_fallback(root: Path) -> Path:
    """`from ._speedups import ...` inside `try: ... except ImportError:`: the real import must be
    taken, not the fallback."""
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "fastpkg"\nversion = "0"\n',
        "fastpkg/__init__.py": "",
        "fastpkg/_speedups.py": "def accelerate(x):\n    return x * 10\n",
        "fastpkg/api.py": '''
            try:
                from ._speedups import accelerate
                IMPLEMENTATION = "speedups"
            except ImportError:
                IMPLEMENTATION = "fallback"

                def accelerate(x):
                    return x


            def boosted(x):
                """
                >>> IMPLEMENTATION
                'speedups'
                >>> boosted(2)
                20
                """
                return accelerate(x)
        ''',
    })
    return root / "fastpkg" / "api.py"


def module_using_its_file(root: Path) -> Path:
    """`__file__` and `__name__` are the module's real path and dotted name; data next to it is read."""
    module = root / "assets" / "paths.py"
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "assets"\nversion = "0"\n',
        "assets/__init__.py": "",
        "assets/greeting.txt": "hello from a data file\n",
        "assets/paths.py": f'''
            import os

            HERE = os.path.dirname(os.path.abspath(__file__))


            def greeting():
                """
                >>> __file__ == {str(module)!r}
                True
                >>> __name__
                'assets.paths'
                >>> greeting()
                'hello from a data file'
                """
                with open(os.path.join(HERE, "greeting.txt")) as handle:
                    return handle.read().strip()
        ''',
    })
    return module


COMPOUND_QUALNAMES = ("under_if", "under_for", "under_while", "under_try", "under_with",
                      "under_match", "Box.under_method", "Box.Inner.deep")
"""The functions `functions_under_compound_statements` defines, as check names them."""


def functions_under_compound_statements(root: Path) -> Path:
    """A function under each compound statement, a method, a nested class's method and a nested function,
    each with a passing doctest (the nested function's is not reachable from the module, as in doctest)."""
    write_tree(root, {
        "compound.py": '''
            import contextlib
            import sys

            if sys.version_info >= (3, 0):
                def under_if(x):
                    """
                    >>> under_if(1)
                    2
                    """
                    return x + 1
            else:
                def under_if(x):
                    raise AssertionError("the other branch")

            for _ in range(1):
                def under_for():
                    """
                    >>> under_for()
                    'for'
                    """
                    return "for"

            while True:
                def under_while():
                    """
                    >>> under_while()
                    'while'
                    """
                    return "while"
                break

            try:
                def under_try():
                    """
                    >>> under_try()
                    'try'
                    """
                    return "try"
            except ImportError:
                pass

            with contextlib.nullcontext():
                def under_with():
                    """
                    >>> under_with()
                    'with'
                    """
                    return "with"

            match sys.platform:
                case _:
                    def under_match():
                        """
                        >>> under_match()
                        'match'
                        """
                        return "match"


            class Box:
                def under_method(self):
                    """
                    >>> Box().under_method()
                    'method'
                    """
                    return "method"

                class Inner:
                    def deep(self):
                        """
                        >>> Box.Inner().deep()
                        'deep'
                        """
                        return "deep"


            def outer():
                def nested():
                    return "nested"
                return nested()
        ''',
    })
    return root / "compound.py"


def compound_stubs(root: Path) -> Path:
    """Stubs under `for` and `match` and in a method, each with its doctests, for generate."""
    write_tree(root, {
        "stubs.py": '''
            import sys

            for _ in range(1):
                def triple(x):
                    """
                    >>> triple(3)
                    9
                    """
                    ...

            match sys.platform:
                case _:
                    def negate(x):
                        """
                        >>> negate(4)
                        -4
                        """
                        ...


            class Counter:
                def doubled(self, n):
                    """
                    >>> Counter().doubled(5)
                    10
                    """
                    ...
        ''',
    })
    return root / "stubs.py"


def method_under_a_caching_descriptor(root: Path) -> Path:
    """`Circle.area` is wrapped by a caching descriptor (only `__get__`, as boltons' `cachedproperty`):
    doctest finds it as a method descriptor of this module, with the docstring it copies."""
    write_tree(root, {"shapes.py": '''
        class cachedproperty:
            def __init__(self, func):
                self.__doc__ = func.__doc__
                self.func = func

            def __get__(self, obj, objtype=None):
                if obj is None:
                    return self
                value = obj.__dict__[self.func.__name__] = self.func(obj)
                return value


        class Circle:
            def __init__(self, r):
                self.r = r

            @cachedproperty
            def area(self):
                """
                >>> Circle(2).area
                12
                """
                return 3 * self.r * self.r
    '''})
    return root / "shapes.py"


def module_docstring_and_test_table(root: Path) -> Path:
    """Examples in the module's docstring and in its `__test__` table, which doctest and pytest run as items
    of their own."""
    write_tree(root, {"tables.py": '''
        """Conversion tables.

        >>> sorted(UNITS)
        ['cm', 'm']
        """

        UNITS = {"cm": 0.01, "m": 1.0}

        __test__ = {
            "metres": """
            >>> UNITS["m"]
            1.0
            """,
            "centimetres": """
            >>> UNITS["cm"] * 100
            1.0
            """,
        }
    '''})
    return root / "tables.py"


def trailing_whitespace(root: Path) -> Path:
    """An expected output with a trailing space that the function does not print: both lines look alike."""
    write_tree(root, {"spaces.py": '''
        def word():
            """
            >>> print(word())
            done\x20
            """
            return "done"
    '''})
    return root / "spaces.py"


def overloaded_function(root: Path) -> Path:
    """`parse` is declared three times, two `typing.overload` stubs and then the implementation: the last
    definition is the one the module holds, with the doctests."""
    write_tree(root, {"overloads.py": '''
        from typing import overload


        @overload
        def parse(text: str) -> int: ...
        @overload
        def parse(text: bytes) -> int: ...
        def parse(text):
            """
            >>> parse("12")
            12
            >>> parse(b"7")
            7
            """
            return int(text)
    '''})
    return root / "overloads.py"


FORM_FEED_MODULE = '''
    """A module in the old GNU style: pages separated by form feeds."""

    \f
    def first():
        """
        >>> first()
        1
        """
        return 1

    \f
    \f
    def second():
        """
        >>> second()
        2
        """
        return 3
'''
"""`second` fails: its example's line must be counted as editors and Python count lines."""


def form_feeds(root: Path, newline: str) -> Path:
    write_tree(root, {"pages.py": FORM_FEED_MODULE}, newline=newline)
    return root / "pages.py"


def doctest_flags(root: Path, config: str | None) -> Path:
    """A doctest that needs NORMALIZE_WHITESPACE and ELLIPSIS; `config` names the file that declares
    them (`pyproject.toml` or `pytest.ini`), or None for none."""
    files = {"flags/__init__.py": "", "flags/table.py": '''
        def table():
            """
            >>> table()
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
             20, 21, 22, 23, 24, 25, 26, 27, 28, 29]
            >>> table()
            [0, 1, ..., 29]
            """
            return list(range(30))
    '''}
    if config == "pyproject.toml":
        files["pyproject.toml"] = '''
            [project]
            name = "flags"
            version = "0"

            [tool.pytest.ini_options]
            doctest_optionflags = "NORMALIZE_WHITESPACE ELLIPSIS"
        '''
    elif config == "pytest.ini":
        files["pytest.ini"] = "[pytest]\ndoctest_optionflags = NORMALIZE_WHITESPACE ELLIPSIS\n"
    else:
        files["pyproject.toml"] = '[project]\nname = "flags"\nversion = "0"\n'
    write_tree(root, files)
    return root / "flags" / "table.py"


def ellipsis_by_default(root: Path) -> Path:
    """No config at all: pytest's default doctest_optionflags is ELLIPSIS."""
    write_tree(root, {"dots.py": '''
        def digits():
            """
            >>> digits()
            '0123...789'
            """
            return "0123456789"
    '''})
    return root / "dots.py"


def only_skipped_examples(root: Path, body: str = "...") -> Path:
    """`parse_date`'s every example carries +SKIP; `today` has one skipped and one real example."""
    write_tree(root, {"dates.py": f'''
        def parse_date(text):
            """
            >>> parse_date("2024-01-02")  # doctest: +SKIP
            (2024, 1, 2)
            >>> parse_date("1999-12-31")  # doctest: +SKIP
            (1999, 12, 31)
            """
            {body}


        def today_year():
            """
            >>> today_year()  # doctest: +SKIP
            2024
            >>> isinstance(today_year(), int)
            True
            """
            return 2024
    '''})
    return root / "dates.py"


def import_fails_outside_the_target(root: Path, kind: str) -> Path:
    """`broken/mod.py`: its stub `area` is fine, the module's other code is not (`kind`: a missing
    package, or a top-level statement that raises)."""
    failing = {
        "missing package": "import surely_not_installed_pkg_3141\n",
        "top-level raise": "SETTINGS = {}\nTIMEOUT = SETTINGS['timeout']\n",
    }[kind]
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "broken"\nversion = "0"\n',
        "broken/__init__.py": "",
        "broken/mod.py": failing + '''

def area(r):
    """
    >>> area(2)
    4
    """
    ...
''',
    })
    return root / "broken" / "mod.py"


IMPORT_FAILURE_LINE = {"missing package": 1, "top-level raise": 2}
"""The line of the module's failing statement, per kind."""


def conftest_doctest_namespace(root: Path) -> Path:
    """`app/units.py`'s doctests use names that conftest.py files add through pytest's `doctest_namespace`
    fixture: `F` from app/conftest.py, `UNIT` from app/pkg/conftest.py (a session-scoped generator fixture),
    and `GREETING`, which the namespace sets over the module's own global of that name. The conftest.py above
    app/pytest.ini (pytest's rootdir) is never loaded: it raises."""
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "app"\nversion = "0"\n',
        "conftest.py": 'raise RuntimeError("pytest does not load a conftest.py above its rootdir")\n',
        "app/pytest.ini": "[pytest]\n",
        "app/conftest.py": '''
            import fractions

            import pytest


            @pytest.fixture(autouse=True)
            def add_fraction(doctest_namespace):
                doctest_namespace["F"] = fractions.Fraction
                doctest_namespace["GREETING"] = "from conftest"


            @pytest.fixture(autouse=True)
            def uses_other_fixtures(tmp_path, doctest_namespace):
                """pytest runs it, pycapsule does not (it needs another fixture): no doctest needs it."""
        ''',
        "app/pkg/__init__.py": "",
        "app/pkg/conftest.py": '''
            import pytest


            @pytest.fixture(autouse=True, scope="session")
            def add_unit(doctest_namespace):
                doctest_namespace["UNIT"] = "cm"
                yield
        ''',
        "app/pkg/units.py": '''
            GREETING = "from the module"


            def half(x):
                """
                >>> half(F(1, 3))
                Fraction(1, 6)
                >>> f"{half(4)} {UNIT}"
                '2.0 cm'
                >>> GREETING
                'from conftest'
                """
                return x / 2
        ''',
    })
    return root / "app" / "pkg" / "units.py"


BROKEN_CONFTEST = {
    "import": ('import pytest\n\nraise RuntimeError("no database here")\n', 3),
    "fixture": ('import pytest\n\n\n@pytest.fixture(autouse=True)\ndef add_db(doctest_namespace):\n'
                '    doctest_namespace["db"] = connect()\n\n\ndef connect():\n'
                '    raise ConnectionError("no database here")\n', 10),
}
"""A conftest.py that raises when it is loaded or in its doctest_namespace fixture, and its failing line."""


def broken_conftest(root: Path, when: str) -> Path:
    """`store/query.py` has a doctest; its conftest.py raises (see BROKEN_CONFTEST)."""
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "store"\nversion = "0"\n',
        "conftest.py": BROKEN_CONFTEST[when][0],
        "store/__init__.py": "",
        "store/query.py": '''
            def count():
                """
                >>> count()
                0
                """
                return 0
        ''',
    })
    return root / "store" / "query.py"


STATS_CORE = '''
    import unitconv


    def percent(part, whole):
        """Share as a whole percentage string (one weak example).

        >>> percent(1, 2)
        '50%'
        """
        ...


    def clamp(x, lo, hi):
        """Limit x to the range [lo, hi] (no example at all)."""
        ...


    def mean(values):
        """The arithmetic mean.

        >>> mean([1, 2, 3])
        2.0
        """
        return sum(values) / len(values)


    def scale(values, factor):
        """Each value times factor, as a float.

        >>> scale([1.5, 2.0], 2)
        [4.0, 5.0]
        """
        result = []
        for value in values:
            result.append(float(value) * factor + 1)
        return result
'''

STATS_TESTS = '''
    import os

    import pytest

    from stats.core import clamp, mean, percent, scale


    def test_percent_rounds_down():
        assert percent(1, 3) == "33%"


    def test_percent_of_the_whole():
        assert percent(2, 2) == "100%"


    @pytest.fixture
    def bounds():
        return (0, 3)


    def test_clamp_above(bounds):
        assert clamp(5, *bounds) == 3


    def test_clamp_below(bounds):
        assert clamp(-1, *bounds) == 0


    def test_clamp_inside(bounds):
        assert clamp(2, *bounds) == 2


    def test_mean_of_one():
        assert mean([4]) == 4.0


    def test_scale_keeps_the_length():
        assert len(scale([1, 2, 3], 2)) == 3


    def test_scale_gives_floats_for_ints():
        assert all(isinstance(value, float) for value in scale([1, 2], 3))


    def test_unrelated_and_already_failing():
        assert os.sep == "no such separator"
'''


def project_with_tests_and_venv(root: Path, pytest_site: str | None = None) -> Path:
    """`src/stats/core.py`, whose module imports `unitconv`, a package only the project's `.venv` holds;
    `tests/test_core.py` tests its functions with pytest (and holds one unrelated test that always fails).
    The venv is made without pip; `pytest_site` (a folder holding pytest) is added to it by a .pth file, as
    a `pip install pytest` would make it importable there."""
    write_tree(root, {
        "pyproject.toml": '[project]\nname = "stats"\nversion = "0"\n',
        "src/stats/__init__.py": "",
        "src/stats/core.py": STATS_CORE,
        "tests/test_core.py": STATS_TESTS,
    })
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    [site] = (root / ".venv").glob("lib/python3*/site-packages")
    write_tree(site, {"unitconv/__init__.py": 'PERCENT = "%"\n'})
    if pytest_site is not None:
        (site / "zz_pytest.pth").write_text(pytest_site + "\n")
    return root / "src/stats/core.py"


DOCUMENTED_README = '''\
# textkit

Turn a title into a URL slug:

```pycon
>>> from textkit import slugify
>>> slugify("Hello World")
'hello-world'

```

`initials` is described in the API reference.
'''

DOCUMENTED_USAGE = '''\
Usage
=====

Every run of spaces becomes one separator::

    >>> import textkit.slugs
    >>> textkit.slugs.slugify("  Many   Spaces ")
    'many-spaces'
    >>> [textkit.slugs.slugify(title) for title in ["A b", "C"]]
    ['a-b',
     'c']
'''


def documented_package(root: Path, normalize_whitespace: bool = True) -> Path:
    """`src/textkit/slugs.py`, whose `slugify` has no examples of its own: README.md imports it from the
    package (which re-exports it) and calls it in a ```pycon block; docs/usage.rst imports the module and
    calls it there, one result written over two lines (NORMALIZE_WHITESPACE, the project's pytest flag unless
    `normalize_whitespace` is False). `initials` is named in the README's prose but never called; `shout`
    has a docstring example. pytest's `--doctest-glob` runs both files as written (`pythonpath = src`)."""
    flags = 'doctest_optionflags = "NORMALIZE_WHITESPACE"\n' if normalize_whitespace else ""
    write_tree(root, {
        "pyproject.toml": f'''
            [project]
            name = "textkit"
            version = "0"

            [tool.setuptools.packages.find]
            where = ["src"]

            [tool.pytest.ini_options]
            pythonpath = ["src"]
            {flags}''',
        "src/textkit/__init__.py": "from .slugs import slugify\n\n__all__ = [\"slugify\"]\n",
        "src/textkit/_separator.py": "SEPARATOR = \"-\"\n",
        "src/textkit/slugs.py": '''
            from ._separator import SEPARATOR


            def slugify(title):
                """The title's words, lower-cased and joined by the separator."""
                return SEPARATOR.join(title.lower().split())


            def initials(title):
                """The first letter of each word."""
                return "".join(word[0] for word in title.split())


            def shout(title):
                """
                >>> shout("hi")
                'HI'
                """
                return title.upper()
        ''',
    })
    (root / "README.md").write_text(DOCUMENTED_README)
    (root / "docs").mkdir()
    (root / "docs" / "usage.rst").write_text(DOCUMENTED_USAGE)
    return root / "src" / "textkit" / "slugs.py"
