"""One version: `__version__` in server/pycapsule/__init__.py is the package's (pyproject.toml reads it from
there), and everything else that names a version names the same: the package as imported and as installed,
`pycapsule --version`, the VS Code extension's package.json (and its lock file's own version where it has
one) and CHANGELOG.md's newest version section. On a release tag ($PYCAPSULE_RELEASE_TAG, set by
.github/workflows/release.yml), the tag is that version and CHANGELOG.md dates its section."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pycapsule
import pytest

from tests.checkout import ROOT
from tests.packaging.changelog import CHANGELOG, UNRELEASED, VERSION, notes, problems, sections

INIT = ROOT / "server" / "pycapsule" / "__init__.py"
DISTRIBUTION = "pycapsule-lsp"


def source_version() -> str:
    """`__version__` as written in the package's __init__.py (read as setuptools reads it: not imported)."""
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__version__"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{INIT} sets no __version__")


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_pyproject_takes_the_version_from_the_package_and_writes_none_of_its_own() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pycapsule.__version__"}


def test_the_version_is_major_minor_patch() -> None:
    assert VERSION.fullmatch(source_version()), source_version()  # the Marketplace takes nothing else


def test_every_place_names_the_same_version() -> None:
    extension = _json(ROOT / "vscode-client" / "package.json")
    changelog = sections(CHANGELOG.read_text(encoding="utf-8"))
    newest = next((section.name for section in changelog if section.name != UNRELEASED), None)
    found = {
        "server/pycapsule/__init__.py": source_version(),
        "pycapsule.__version__ (imported)": pycapsule.__version__,
        f"{DISTRIBUTION} installed (stale? pip install -e .)": importlib.metadata.version(DISTRIBUTION),
        "vscode-client/package.json": extension["version"],
        "CHANGELOG.md (newest version)": newest,
    }
    assert Path(pycapsule.__file__).resolve() == INIT.resolve()  # this checkout's, not another install
    assert set(found.values()) == {source_version()}, found


def test_every_lock_file_has_the_version_of_its_package_json() -> None:
    locks = [path for path in (ROOT / "package-lock.json", ROOT / "vscode-client" / "package-lock.json")
             if path.is_file()]
    assert locks
    for lock_path in locks:
        package, lock = _json(lock_path.with_name("package.json")), _json(lock_path)
        own = {lock.get("version"), lock.get("packages", {}).get("", {}).get("version")}
        assert own == {package.get("version")}, (lock_path, own, package.get("version"))


def test_pycapsule_version_prints_it() -> None:
    done = subprocess.run([sys.executable, "-m", "pycapsule", "--version"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert (done.returncode, done.stdout.strip()) == (0, f"pycapsule {source_version()}"), done.stderr


def test_the_changelog_heads_its_newest_version_section_with_the_version() -> None:
    assert problems(CHANGELOG.read_text(encoding="utf-8"), source_version()) == []


@pytest.mark.skipif(not os.environ.get("PYCAPSULE_RELEASE_TAG"),
                    reason="not a release: $PYCAPSULE_RELEASE_TAG is set by the release workflow on a tag")
def test_on_a_release_tag_the_tag_is_the_version_and_the_changelog_dates_it() -> None:
    assert os.environ["PYCAPSULE_RELEASE_TAG"] == f"v{source_version()}"
    text = CHANGELOG.read_text(encoding="utf-8")
    assert problems(text, source_version(), releasing=True) == []
    assert notes(text, source_version()).strip()


GOOD = """# Changelog

## [Unreleased]

### Fixed
- a thing

## [0.2.0] - 2026-12-01

### Added
- more

## [0.1.0] - 2026-11-01

- the first
"""


def test_a_good_changelog_passes_and_gives_a_versions_notes() -> None:
    assert problems(GOOD, "0.2.0", releasing=True) == []
    assert notes(GOOD, "0.2.0") == "### Added\n- more\n"
    assert notes(GOOD, "0.1.0") == "- the first\n"
    with pytest.raises(ValueError, match="no section"):
        notes(GOOD, "0.3.0")


@pytest.mark.parametrize(("text", "version", "releasing", "wrong"), [
    (GOOD, "0.3.0", False, "the newest version section is [0.2.0], the package is 0.3.0"),
    (GOOD.replace("## [Unreleased]\n", ""), "0.2.0", False, "the first section is not [Unreleased]"),
    (GOOD.replace("0.2.0] - 2026-12-01", "0.2.0] - Unreleased"), "0.2.0", True,
     "[0.2.0] is being released but its heading has no date"),
    (GOOD.replace("0.1.0] - 2026-11-01", "0.1.0] - Unreleased"), "0.2.0", False,
     "[0.1.0] is older than the newest version and still 'Unreleased'"),
    (GOOD.replace("2026-12-01", "1 December 2026"), "0.2.0", False,
     "[0.2.0] is headed neither with a date YYYY-MM-DD nor 'Unreleased'"),
    (GOOD.replace("2026-12-01", "2026-13-01"), "0.2.0", False, "[0.2.0] is headed neither"),
    (GOOD.replace("[0.1.0]", "[0.3.0]"), "0.2.0", False, "the version sections are not newest first"),
    (GOOD.replace("2026-11-01", "2026-12-24"), "0.2.0", False, "the dates of the version sections"),
    (GOOD.replace("### Added\n- more\n", ""), "0.2.0", False, "[0.2.0] says nothing"),
    (GOOD.replace("[0.2.0]", "[0.2.0rc1]"), "0.2.0rc1", False, "[0.2.0rc1] is not a version major.minor"),
], ids=["other-version", "no-unreleased", "tagged-undated", "older-undated", "date-form", "no-such-date",
        "order", "date-order", "empty", "pre-release"])
def test_the_changelog_check_finds(text: str, version: str, releasing: bool, wrong: str) -> None:
    found = problems(text, version, releasing)
    assert any(problem.startswith(wrong) for problem in found), found


def test_notes_refuse_a_version_that_is_not_released() -> None:
    with pytest.raises(ValueError, match="not released"):
        notes(GOOD.replace("0.2.0] - 2026-12-01", "0.2.0] - Unreleased"), "0.2.0")
