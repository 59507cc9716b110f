"""Which documentation examples are a function's (`pycapsule.doc_examples`): the doctest blocks of the README
and docs/ that call it by a name bound to it in the file's one namespace, whatever the import's form; read
from the files only, nothing imported."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.doc_examples import describe, doc_examples, documents_module, prompt_text

from tests.projects.builders import write_tree

PACKAGE = {
    "pyproject.toml": '[project]\nname = "kit"\nversion = "0"\n',
    "src/kit/__init__.py": "from .text import slugify as slugify\nfrom . import numbers\n",
    "src/kit/text.py": '''
        def slugify(text):
            return "-".join(text.lower().split())


        def shout(text):
            return text.upper()


        class Counter:
            def bump(self):
                return 1
    ''',
    "src/kit/numbers.py": "from .text import *\n\n\ndef double(x):\n    return 2 * x\n",
}


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    write_tree(tmp_path, PACKAGE)
    return tmp_path / "src" / "kit" / "text.py"


def readme(root: Path, text: str, name: str = "README.md") -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def judged(module: Path, qualname: str = "slugify") -> list[tuple[str, tuple[int, ...]]]:
    return [(doc.path, doc.judged) for doc in doc_examples(module, qualname)]


@pytest.mark.parametrize("calls", [
    ">>> from kit.text import slugify\n>>> slugify('A b')\n'a-b'\n",
    ">>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n",
    ">>> import kit.text\n>>> kit.text.slugify('A b')\n'a-b'\n",
    ">>> import kit.text as t\n>>> t.slugify('A b')\n'a-b'\n",
    ">>> from kit import text\n>>> text.slugify('A b')\n'a-b'\n",
    ">>> import kit\n>>> kit.slugify('A b')\n'a-b'\n",
    ">>> from kit.text import *\n>>> slugify('A b')\n'a-b'\n",
    ">>> from kit.numbers import slugify\n>>> slugify('A b')\n'a-b'\n",
], ids=["from-module", "re-exported", "import-module", "module-alias", "from-package-import-module",
        "package-attribute", "star", "through-a-star-re-export"])
def test_every_way_of_importing_the_function_counts(kit: Path, calls: str) -> None:
    readme(kit.parents[2], f"# kit\n\n{calls}")
    assert judged(kit) == [("README.md", (3, 4))]


def test_an_alias_counts_and_the_name_it_shadows_does_not(kit: Path) -> None:
    readme(kit.parents[2], "# kit\n\n>>> from kit import slugify as make\n>>> make('A b')\n'a-b'\n\n"
                           "Not ours:\n\n>>> def slugify(x):\n...     return x\n>>> slugify('A b')\n'A b'\n")
    assert judged(kit) == [("README.md", (3, 4))]


def test_a_file_that_never_imports_the_function_has_none_of_its_examples(kit: Path) -> None:
    readme(kit.parents[2], "# kit\n\n`slugify` is described elsewhere.\n\n>>> slugify = str.lower\n"
                           ">>> slugify('A')\n'a'\n")
    assert judged(kit) == []


def test_a_function_the_docs_do_not_call_is_not_given_the_files_examples(kit: Path) -> None:
    readme(kit.parents[2], "# kit\n\n>>> from kit.text import slugify, shout\n>>> slugify('A b')\n'a-b'\n")
    assert judged(kit, "shout") == []


def test_only_the_blocks_calling_the_function_count_and_the_file_stops_after_the_last(kit: Path) -> None:
    readme(kit.parents[2], """\
# kit

```pycon
>>> from kit.text import shout, slugify
>>> shout("a")
'A'
```

```pycon
>>> slugify("A b")
'a-b'

>>> slugify("")
''
```

```pycon
>>> shout("b")
'B'
```
""")
    [doc] = doc_examples(kit, "slugify")
    assert (doc.judged, doc.examples, doc.blocks, doc.places) == ((10, 13), 2, (10,), ("README.md:10",))
    assert doc.item("slugify").judged == (10, 13) and doc.item("slugify").document == "README.md"


def test_a_block_whose_call_is_skipped_is_not_the_functions(kit: Path) -> None:
    readme(kit.parents[2], ">>> from kit import slugify\n>>> slugify('A b')  # doctest: +SKIP\n'a-b'\n")
    assert judged(kit) == []


def test_a_method_is_called_through_its_class(kit: Path) -> None:
    readme(kit.parents[2], "Counting:\n\n>>> from kit.text import Counter\n\nThen:\n\n"
                           ">>> c = Counter()\n>>> c.bump()\n1\n")
    assert judged(kit, "Counter.bump") == [("README.md", (7, 8))]


def test_the_readme_and_the_docs_folder_are_read_but_not_build_hidden_venv_folders_or_change_logs(
        kit: Path) -> None:
    root = kit.parents[2]
    calls = ">>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n"
    for name in ("README.rst", "docs/usage.md", "docs/guide/more.txt", "docs/_build/_sources/usage.txt",
                 "docs/.hidden/x.md", "docs/venv/x.md", "notes/other.md", "docs/notes.py",
                 "docs/versions.rst", "docs/CHANGELOG.md", "docs/releases/1.0.txt"):
        readme(root, calls, name)
    assert [path for path, _ in judged(kit)] == ["README.rst", "docs/guide/more.txt", "docs/usage.md"]


def test_a_huge_file_is_not_read(kit: Path) -> None:
    calls = ">>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n"
    readme(kit.parents[2], calls + "\n" + "words " * 200_000)
    assert judged(kit) == []


def test_a_file_doctest_cannot_parse_is_left_out_as_pytest_would_fail_it(kit: Path) -> None:
    readme(kit.parents[2], ">>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n\n"
                           "    >>> x = (1,\n  ... 2)\n")
    assert judged(kit) == []


def test_what_the_output_and_the_prompt_say(kit: Path) -> None:
    root = kit.parents[2]
    readme(root, "# kit\n\n>>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n")
    readme(root, "Usage\n=====\n\n    >>> import kit\n    >>> kit.slugify('x  y',\n    ...    )\n    'x-y'\n",
           "docs/usage.rst")
    docs = doc_examples(kit, "slugify")
    assert describe(docs) == "4 documentation examples (README.md:3, docs/usage.rst:4)"
    assert prompt_text(docs) == (
        "# README.md:3\n>>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n\n"
        "# docs/usage.rst:4\n>>> import kit\n>>> kit.slugify('x  y',\n...    )\n'x-y'\n")


def test_a_module_is_documented_when_its_docs_call_something_it_defines(kit: Path) -> None:
    readme(kit.parents[2], ">>> from kit import slugify\n>>> slugify('A b')\n'a-b'\n")
    numbers, package = kit.parent / "numbers.py", kit.parent / "__init__.py"
    found = documents_module(kit), documents_module(numbers), documents_module(package)
    assert found == (True, False, False), "numbers only re-exports it, the package only imports it"


def test_a_file_outside_any_project_has_none(tmp_path: Path) -> None:
    assert doc_examples(None, "f") == ()


def test_a_class_or_a_function_nested_in_another_has_none(kit: Path) -> None:
    kit.write_text(kit.read_text() + "\n\ndef outer():\n    def bump():\n        return 2\n    return bump\n")
    readme(kit.parents[2], ">>> from kit.text import Counter, outer\n>>> Counter().bump()\n1\n"
                           ">>> outer.bump()\nTraceback (most recent call last):\nAttributeError: no\n")
    assert (judged(kit, "Counter"), judged(kit, "outer.bump")) == ([], [])
    assert judged(kit, "Counter.bump") == [("README.md", (1, 2, 4))]
