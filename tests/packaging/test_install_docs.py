"""Every install command the README and the docs give either works from a clone (a path in it: `.`,
`'.[bench]'`) or says which index it needs: pycapsule-lsp is not on PyPI yet, so a `pip install pycapsule-lsp`
must say PyPI in its paragraph (issue 49 item 6). `pip install X`, `pipx install X`, `uv tool install X` and
`uv pip install X` are found in fenced blocks and in prose alike."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from tests.checkout import ROOT, checkout_files

OURS = "pycapsule-lsp"
INSTALL = re.compile(r"\b(?:pipx|uv tool|uv pip|pip3?|-m pip) install\s+([^`\n#;&|)]*)")
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def pages() -> list[Path]:
    return [path for path in checkout_files() if path.suffix == ".md"
            and (path.parent == Path() or path.parts[0] == "docs" or path == Path("vscode-client/README.md"))]


def installs(text: str) -> list[tuple[str, str]]:
    """(what is installed, its paragraph) for every install command in a Markdown text."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for match in INSTALL.finditer(paragraph):
            try:
                words = shlex.split(match.group(1))
            except ValueError:
                words = match.group(1).split()
            targets = [word for word in words if not word.startswith("-")]
            found += [(target, paragraph) for target in targets[:1]]
    return found


def problem(target: str, paragraph: str) -> str | None:
    """Why this install command is not true for a reader with a clone (None: it is)."""
    if target.startswith("."):  # a path in the clone: the project itself, with known extras
        name, _, extras = target.partition("[")
        if not (ROOT / name / "pyproject.toml").is_file():
            return f"{target}: no project at {name} in a clone"
        unknown = set(extras.rstrip("]").split(",")) - EXTRAS - {""}
        return f"{target}: no extra {sorted(unknown)}" if unknown else None
    name = re.split(r"[\[=<>!~ ]", target, maxsplit=1)[0].lower().replace("_", "-")
    if name == OURS and "PyPI" not in paragraph:
        return f"{target}: {OURS} is not on PyPI yet; say it comes from PyPI or install from a clone"
    if name == "pycapsule":
        return f"{target}: 'pycapsule' on PyPI is another project"
    return None


@pytest.mark.parametrize("page", pages(), ids=str)
def test_every_install_command_works_from_a_clone_or_names_its_index(page: Path) -> None:
    found = installs((ROOT / page).read_text(encoding="utf-8"))
    assert [p for target, paragraph in found if (p := problem(target, paragraph))] == []


def test_the_quick_start_installs_from_the_clone_three_ways() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = {re.sub(r"\s+", " ", match.group(0)).split(" install")[0] for match in INSTALL.finditer(quick)
                if match.group(1).split()[:1] == ["."]}
    assert commands >= {"pipx", "uv tool", "pip"}, commands


def test_the_check_tells_a_clone_install_from_one_that_needs_pypi() -> None:
    text = ("Install with `pip install pycapsule-lsp`.\n\nFrom PyPI: `pipx install pycapsule-lsp`.\n\n"
            "```sh\npython3 -m pip install -e '.[test,bench]'\npip install '.[nope]'\n```\n")
    found = installs(text)
    assert [target for target, _ in found] == [OURS, OURS, ".[test,bench]", ".[nope]"]
    assert [bool(problem(target, paragraph)) for target, paragraph in found] == [True, False, False, True]
