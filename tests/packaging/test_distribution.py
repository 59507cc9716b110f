"""What a user gets from PyPI: the wheel and the sdist built from this tree, under a name we own, with the
license, trustworthy metadata and a description that renders there (no links PyPI cannot resolve).

Built once per session without build isolation (offline: the `test` extra pins `build` and setuptools)."""

from __future__ import annotations

import email.parser
import email.policy
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest

from tests.checkout import ROOT, checkout_files, copy_checkout
from tests.packaging.test_urls import REPOSITORY

NAME = "pycapsule-lsp"  # "pycapsule" on PyPI is another project ("tools for Capsule BCI system")
# Markdown links and images `[text](target)`, reference definitions `[id]: target`, HTML src/href.
LINK_TARGETS = re.compile(r"\]\(\s*<?([^)\s>]+)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$|(?:src|href)=[\"']([^\"']+)",
                          re.MULTILINE)


@dataclass(frozen=True)
class Built:
    wheel: zipfile.ZipFile
    sdist: tarfile.TarFile
    sdist_root: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    given = os.environ.get("PYCAPSULE_RELEASE_DIST")  # tests/run.sh: release_check.sh built them already
    if given:
        out = Path(given)
    else:
        tree = copy_checkout(tmp_path_factory.mktemp("tree"))
        out = tmp_path_factory.mktemp("dist")
        # sdist first, then the wheel from the unpacked sdist: a file missing from the sdist breaks the wheel
        build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                                str(tree)], capture_output=True, text=True, timeout=600)
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    [wheel_path] = out.glob("*.whl")
    [sdist_path] = out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel_path) as wheel, tarfile.open(sdist_path) as sdist:
        yield Built(wheel, sdist, sdist_path.name.removesuffix(".tar.gz"))


def wheel_metadata(built: Built) -> Message:
    [path] = [n for n in built.wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return email.parser.Parser(policy=email.policy.compat32).parsestr(built.wheel.read(path).decode())


def sdist_member(built: Built, name: str) -> bytes:
    member = built.sdist.extractfile(f"{built.sdist_root}/{name}")
    assert member is not None, f"{name} is not a file in the sdist"
    return member.read()


def test_the_distribution_is_named_pycapsule_lsp_and_installs_the_pycapsule_command(built: Built) -> None:
    metadata = wheel_metadata(built)
    assert metadata["Name"] == NAME
    entry_points = next(n for n in built.wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
    assert "pycapsule = pycapsule.__main__:main" in built.wheel.read(entry_points).decode()
    assert "pycapsule/__init__.py" in built.wheel.namelist()


def test_wheel_and_sdist_carry_the_apache_license_text(built: Built) -> None:
    license_text = (ROOT / "LICENSE").read_bytes()
    assert b"Apache License" in license_text and b"Version 2.0, January 2004" in license_text
    [in_wheel] = [n for n in built.wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert built.wheel.read(in_wheel) == license_text
    assert sdist_member(built, "LICENSE") == license_text


def test_the_sdist_carries_the_changelog(built: Built) -> None:
    assert sdist_member(built, "CHANGELOG.md") == (ROOT / "CHANGELOG.md").read_bytes()


def test_the_project_urls_pypi_lists_are_the_repositorys(built: Built) -> None:
    urls = dict(entry.split(", ", 1) for entry in wheel_metadata(built).get_all("Project-URL") or [])
    assert urls["Repository"] == REPOSITORY and "Changelog" in urls
    assert [url for url in urls.values() if not url.startswith(REPOSITORY)] == []


def test_the_license_is_an_spdx_expression_and_no_classifier_contradicts_it(built: Built) -> None:
    metadata = wheel_metadata(built)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    classifiers = metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639: the expression says it
    assert metadata["Requires-Python"] == ">=3.11"


def test_the_wheel_ships_every_file_of_the_package_code_and_data(built: Built) -> None:
    package = [path.relative_to("server").as_posix() for path in checkout_files()
               if path.parts[:2] == ("server", "pycapsule")]
    assert "pycapsule/py.typed" in package and "pycapsule/bench/datasets/realcode.json" in package
    assert sorted(set(package) - set(built.wheel.namelist())) == []


def test_neither_the_wheel_nor_the_sdist_carries_the_measurements_the_records_the_docs_or_the_tests(
        built: Built) -> None:
    in_wheel = {name.split("/")[0] for name in built.wheel.namelist()}
    assert {name for name in in_wheel if not name.endswith(".dist-info")} == {"pycapsule"}
    in_sdist = {name.split("/")[1] for name in built.sdist.getnames() if name.count("/") >= 1}
    assert in_sdist & {"measurements", "data", "docs", "tests", "examples", "vscode-client"} == set()
    assert "server" in in_sdist


def test_the_description_pypi_shows_has_no_link_it_cannot_resolve(built: Built) -> None:
    metadata = wheel_metadata(built)
    assert metadata["Description-Content-Type"] == "text/markdown"
    description = metadata.get_payload()
    assert "pycapsule-lsp" in description and "pycapsule generate" in description
    for text in (description, sdist_member(built, "PKG-INFO").decode()):
        targets = [next(g for g in match.groups() if g) for match in LINK_TARGETS.finditer(text)]
        assert [t for t in targets if not t.startswith("https://")] == []


def test_the_link_check_finds_relative_links_and_images() -> None:
    text = "see [docs](docs/bench.md), ![shot](docs/images/a.png)\n[ref]: ../x.md\n<img src=\"b.png\">"
    targets = [next(g for g in match.groups() if g) for match in LINK_TARGETS.finditer(text)]
    assert targets == ["docs/bench.md", "docs/images/a.png", "../x.md", "b.png"]


def test_every_install_hint_names_our_distribution_not_the_other_project() -> None:
    wrong = re.compile(r"pip install\s+['\"]?pycapsule(?![-\w])")
    places = [*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), ROOT / "vscode-client" / "README.md",
              *ROOT.glob("vscode-client/src/**/*.ts"), *ROOT.glob("server/pycapsule/**/*.py")]
    hits = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in places
            for match in wrong.finditer(path.read_text(encoding="utf-8"))]
    assert hits == []
