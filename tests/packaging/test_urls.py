"""One repository URL: pyproject.toml's `[project.urls] Repository`. Its other URLs live under it, the VS Code
extension's manifest names it (repository, homepage, bugs), and every link to a GitHub repository called
pycapsule anywhere in the checkout (README, docs, CHANGELOG, workflows, code) is to that one."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from tests.checkout import ROOT, checkout_files

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REPOSITORY = PROJECT["urls"]["Repository"]
GITHUB = re.compile(r"https://github\.com/([\w.-]+)/([\w-]+(?:\.(?!git\b)[\w-]+)*)")
"""A GitHub repository's URL (owner, name), without a `.git` ending."""
TEXT_SUFFIXES = {".md", ".toml", ".json", ".yml", ".yaml", ".py", ".ts", ".mjs", ".sh", ".txt", ".cfg", ".in"}


def ours(owner: str, name: str) -> bool:
    return "pycapsule" in f"{owner}/{name}".lower()


def test_the_repository_is_one_github_repository() -> None:
    assert GITHUB.fullmatch(REPOSITORY), REPOSITORY


def test_every_url_of_the_project_is_under_the_repository() -> None:
    assert set(PROJECT["urls"]) >= {"Homepage", "Repository", "Issues", "Changelog"}
    assert [url for url in PROJECT["urls"].values() if not url.startswith(REPOSITORY)] == []
    assert PROJECT["urls"]["Issues"] == f"{REPOSITORY}/issues"


def test_the_extension_manifest_names_the_same_repository() -> None:
    manifest = json.loads((ROOT / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    assert manifest["repository"]["url"].removesuffix(".git") == REPOSITORY
    assert manifest["homepage"].startswith(REPOSITORY)
    assert manifest["bugs"]["url"] == f"{REPOSITORY}/issues"


def links_to_other_repositories(paths: list[Path], root: Path = ROOT) -> list[str]:
    """`path: url` for every link to a repository called pycapsule that is not REPOSITORY."""
    owner, name = GITHUB.fullmatch(REPOSITORY).groups()
    found = []
    for path in paths:
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        found += [f"{path}: {match.group(0)}" for match in GITHUB.finditer(text)
                  if ours(*match.groups()) and match.groups() != (owner, name)]
    return found


def test_every_link_to_a_pycapsule_repository_is_to_the_one() -> None:
    here = Path(__file__).resolve().relative_to(ROOT)  # the check's own examples below
    paths = [path for path in checkout_files() if path.suffix in TEXT_SUFFIXES and path != here
             and (ROOT / path).stat().st_size < 2_000_000]
    assert Path("vscode-client/package.json") in paths and Path("README.md") in paths
    assert links_to_other_repositories(paths) == []


def test_the_link_check_finds_another_repository_and_passes_the_one_and_others(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(f"[x]({REPOSITORY}/issues) {REPOSITORY}.git "
                                   "https://github.com/xorbitsai/xllamacpp "
                                   "https://github.com/PyCapsule-Org/pycapsule "
                                   "https://github.com/someone/pycapsule-lsp/tree/main\n")
    assert links_to_other_repositories([Path("a.md")], tmp_path) == [
        "a.md: https://github.com/PyCapsule-Org/pycapsule", "a.md: https://github.com/someone/pycapsule-lsp"]
