"""What a release publishes, as tests/packaging/release_check.sh builds it (tests/run.sh runs the script on
every CI run and exports $PYCAPSULE_RELEASE_DIST; without it these tests run the script themselves): the
wheel, the sdist and a .vsix ready for the Visual Studio Marketplace and Open VSX, all of one version; and
the release workflow that builds them with the same script and publishes only on a tag, with its secrets."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.checkout import ROOT

SCRIPT = "tests/packaging/release_check.sh"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The Marketplace's categories (https://code.visualstudio.com/api/references/extension-manifest)
CATEGORIES = {"Azure", "Data Science", "Debuggers", "Education", "Extension Packs", "Formatters", "Keymaps",
              "Language Packs", "Linters", "Machine Learning", "Notebooks", "Programming Languages",
              "SCM Providers", "Snippets", "Testing", "Themes", "Visualization", "AI", "Chat", "Other"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("PYCAPSULE_RELEASE_DIST")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("release")
    done = subprocess.run(["bash", str(ROOT / SCRIPT), str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_three_files_of_one_version(dist: Path) -> None:
    extension = json.loads((ROOT / "vscode-client" / "package.json").read_text())
    assert extension["version"] == VERSION
    built = sorted(path.name for path in dist.iterdir() if path.suffix in (".whl", ".gz", ".vsix"))
    assert built == [f"pycapsule-{VERSION}.vsix", f"pycapsule_lsp-{VERSION}-py3-none-any.whl",
                     f"pycapsule_lsp-{VERSION}.tar.gz"]


def test_the_vsix_is_ready_for_the_marketplace_and_open_vsx(dist: Path) -> None:
    with zipfile.ZipFile(dist / f"pycapsule-{VERSION}.vsix") as vsix:
        names = vsix.namelist()
        manifest = json.loads(vsix.read("extension/package.json"))
    for field in ("name", "displayName", "description", "publisher", "version", "license"):
        assert isinstance(manifest.get(field), str) and manifest[field], field
    assert manifest["license"] == "Apache-2.0" and "extension/LICENSE.txt" in names
    assert manifest["repository"]["url"].startswith("https://")
    assert manifest["engines"]["vscode"].startswith("^1.")
    assert manifest["categories"] and set(manifest["categories"]) <= CATEGORIES
    assert len(manifest.get("keywords", [])) <= 30  # the Marketplace's limit
    if "icon" in manifest:
        assert f"extension/{manifest['icon']}" in names
    assert "extension/readme.md" in names and "extension/dist/extension.js" in names
    assert f"extension/server/pycapsule_lsp-{VERSION}-py3-none-any.whl" in names  # the server it installs


def _workflow() -> dict:
    document = yaml.safe_load(WORKFLOW.read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads the key `on` as true
    return document


def test_the_release_workflow_builds_with_the_ci_script_on_a_tag() -> None:
    workflow = _workflow()
    assert workflow["on"]["push"]["tags"] == ["v*"]
    runs = [step.get("run", "") for step in workflow["jobs"]["build"]["steps"]]
    assert any(run.strip() == f"bash {SCRIPT} dist" for run in runs), runs
    assert f"bash {SCRIPT}" in (ROOT / "tests" / "run.sh").read_text()  # the same step in every CI run


def test_every_publishing_step_needs_a_tag_and_its_secret() -> None:
    publishing = [(job, step) for job in _workflow()["jobs"].values() for step in job["steps"]
                  if any(word in step.get("run", "") for word in ("upload", "publish"))]
    assert len(publishing) == 3  # PyPI, the Marketplace, Open VSX
    for job, step in publishing:
        assert "startsWith(github.ref, 'refs/tags/v')" in job.get("if", "")
        assert step["if"].startswith("startsWith(github.ref, 'refs/tags/v') && env."), step
        secret = step["if"].rpartition("env.")[2].split()[0]
        assert step["if"].endswith(f"env.{secret} != ''")
        assert secret in ("PYPI_API_TOKEN", "VSCE_PAT", "OVSX_PAT")
        assert job["env"][secret] == f"${{{{ secrets.{secret} }}}}"
        assert f"${secret}" in step["run"]  # given from the environment, never written in the file
