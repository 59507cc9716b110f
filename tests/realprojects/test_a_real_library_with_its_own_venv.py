"""A real library, in its own source tree, with its own `.venv`: inflect 7.3.1 (pinned sdist) imports
typeguard, which only the project's environment holds, and its pytest.ini asks for `--import-mode importlib`.
`generate` on its `engine.ordinal` method, stubbed, with the scripted model: an answer that passes the
docstring's three examples but says "11st" fails the library's own test_ordinal and is not written; the
right one passes the examples and the 23 tests that name `ordinal`, run with the project's interpreter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pycapsule.bench.datasets.sdists import Sdist, source_tree

from tests.fakes.openai_server import FakeOpenAI
from tests.projects.cli import pycapsule

INFLECT = Sdist("inflect", "7.3.1", "edd785148a673b0c6dfef1a7d80cc1bcb2dd6d041cdb313b60032e464fd4e808")
DEPENDENCIES = ("typeguard==4.6.1", "more-itertools==11.2.1", "typing-extensions==4.16.0")
PYTEST_SITE = str(Path(pytest.__file__).resolve().parent.parent)
START = "        if DIGIT.match(str(num)):\n"
END = "    def millfn(self, ind: int = 0) -> str:"


@pytest.fixture
def inflect(tmp_path: Path) -> Path:
    """A copy of the tree with a .venv holding the library's dependencies (and, by a .pth file, pytest)."""
    try:
        tree = source_tree(INFLECT)
    except Exception as error:  # no network and no cache: say so
        pytest.skip(f"the inflect sdist cannot be had here: {error}")
    root = tmp_path / "inflect"
    shutil.copytree(tree, root)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    [site] = (root / ".venv").glob("lib/python3*/site-packages")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--target", str(site), *DEPENDENCIES], check=True)
    (site / "zz_pytest.pth").write_text(PYTEST_SITE + "\n")
    subprocess.run(["chmod", "-R", "a+rX", str(tmp_path)], check=True)
    return root


def test_generate_on_a_real_library_is_passed_only_by_its_own_tests(
        tmp_path: Path, inflect: Path, openai_server: FakeOpenAI) -> None:
    module = inflect / "inflect/__init__.py"
    text = module.read_text(encoding="utf-8")
    start, end = text.index(START), text.index(END)
    body = textwrap.indent(textwrap.dedent(text[start:end]), "    ").rstrip()
    module.write_text(text[:start] + "        ...\n\n" + text[end:], encoding="utf-8")
    right = f"```python\ndef ordinal(self, num):\n{body}\n```"
    openai_server.queue(right.replace("post = nth[n % 100]", "post = nth[n % 10]"), right)

    done = pycapsule("generate", f"{module}::engine.ordinal", "--json", "--write", home=tmp_path,
                     model_url=openai_server.base_url)

    [result] = json.loads(done.stdout)["results"]
    assert (result["status"], result["attempts"], done.returncode) == ("passed", 2, 0), done.stderr
    assert f"python: {inflect / '.venv/bin/python'} (.venv at the project root)" in done.stderr
    assert "tests/test_inflections.py::test_ordinal: AssertionError: assert '11st' == '11th'" in done.stderr
    assert result["verified_by"].startswith("3 examples + 23 tests (tests/test_inflections.py")
    assert "post = nth[n % 100]" in module.read_text(encoding="utf-8")
