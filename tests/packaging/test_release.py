"""What a release publishes, as tests/packaging/release_check.sh builds it (tests/run.sh runs the script on
every CI run and exports $PYCAPSULE_RELEASE_DIST; without it these tests run the script themselves): the
wheel, the sdist and a .vsix ready for the Visual Studio Marketplace and Open VSX, all of one version; and
the release workflow that builds them with the same script and publishes only on a pushed tag, each job with
only the permissions it needs: attestations, PyPI by Trusted Publishing, a GitHub release, the two extension
registries when their secrets are set (docs/release.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.checkout import ROOT
from tests.packaging.test_urls import REPOSITORY
from tests.packaging.test_version import source_version

SCRIPT = "tests/packaging/release_check.sh"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
VERSION = source_version()
TAG = "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/v')"
"""The condition of everything that publishes: a pushed tag v*, never a run by hand."""
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
    assert manifest["repository"]["url"].removesuffix(".git") == REPOSITORY
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


def _steps_using(job: dict, action: str) -> list[dict]:
    return [step for step in job["steps"] if step.get("uses", "").partition("@")[0] == action]


def _downloaded(job: dict) -> list[str]:
    return sorted(step["with"]["name"] for step in _steps_using(job, "actions/download-artifact"))


def test_nothing_is_granted_by_default_and_each_job_only_what_it_needs() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {}
    assert {name: job.get("permissions") for name, job in workflow["jobs"].items()} == {
        "build": {"contents": "read"},  # installs and runs third-party code: no token that can write
        "attest": {"id-token": "write", "attestations": "write"},
        "pypi": {"id-token": "write"},
        "github-release": {"contents": "write"},
        "extension": {},
    }


def test_only_a_pushed_tag_publishes() -> None:
    jobs = _workflow()["jobs"]
    assert "if" not in jobs["build"]
    assert [name for name, job in jobs.items() if name != "build" and job.get("if") != TAG] == []
    tagged = [step for step in jobs["build"]["steps"] if "if" in step]
    assert tagged and all(step["if"] == TAG for step in tagged)
    assert TAG in jobs["build"]["env"]["PYCAPSULE_RELEASE_TAG"]  # tests/packaging/test_version.py's tag check


def test_every_action_is_pinned_and_third_party_ones_to_a_commit() -> None:
    uses = [step["uses"] for job in _workflow()["jobs"].values() for step in job["steps"] if "uses" in step]
    pinned = re.compile(r"[\w.-]+/[\w.-]+@(v\d+(\.\d+)*|[0-9a-f]{40})")
    assert uses and [use for use in uses if not pinned.fullmatch(use)] == []
    commit = re.compile(r".+@[0-9a-f]{40}")
    assert [use for use in uses if not use.startswith("actions/") and not commit.fullmatch(use)] == []


def test_pypi_gets_the_wheel_and_sdist_by_trusted_publishing_with_attestations() -> None:
    workflow = _workflow()
    pypi = workflow["jobs"]["pypi"]
    assert pypi["environment"]["name"] == "release"  # the environment the trusted publisher on PyPI names
    assert _downloaded(pypi) == ["python"]
    [publish] = _steps_using(pypi, "pypa/gh-action-pypi-publish")
    assert publish["with"]["attestations"] is True
    assert not set(publish["with"]) & {"password", "user", "repository-url"}  # no token: OIDC, to PyPI itself
    assert "PYPI_API_TOKEN" not in WORKFLOW.read_text()
    built = workflow["jobs"]["build"]
    python = next(s for s in _steps_using(built, "actions/upload-artifact") if s["with"]["name"] == "python")
    assert python["with"]["path"].split() == ["dist/*.whl", "dist/*.tar.gz"]


def test_the_wheel_the_sdist_and_the_vsix_get_build_provenance() -> None:
    attest = _workflow()["jobs"]["attest"]
    assert _downloaded(attest) == ["python", "vsix"]
    [step] = _steps_using(attest, "actions/attest-build-provenance")
    assert step["with"]["subject-path"].split() == ["dist/*.whl", "dist/*.tar.gz", "dist/*.vsix"]


def test_the_github_release_carries_the_three_files_and_the_changelogs_notes() -> None:
    jobs = _workflow()["jobs"]
    release = jobs["github-release"]
    assert release["needs"] == "pypi" and _downloaded(release) == ["python", "release-notes", "vsix"]
    [create] = [step for step in release["steps"] if "gh release create" in step.get("run", "")]
    command = " ".join(create["run"].split("gh release create", 1)[1].replace("\\\n", " ").split())
    assert command.startswith('"$GITHUB_REF_NAME" --verify-tag')
    assert command.endswith("--notes-file notes/release-notes.md dist/*.whl dist/*.tar.gz dist/*.vsix")
    assert create["env"]["GH_TOKEN"] == "${{ github.token }}"
    runs = [step.get("run", "") for step in jobs["build"]["steps"]]
    assert 'python tests/packaging/changelog.py notes "${GITHUB_REF_NAME#v}" > release-notes.md' in runs


@pytest.mark.parametrize(("registry", "secret"), [("Visual Studio Marketplace", "VSCE_PAT"),
                                                  ("Open VSX", "OVSX_PAT")])
def test_each_extension_registry_is_skipped_with_a_notice_when_its_secret_is_not_set(registry: str,
                                                                                    secret: str) -> None:
    jobs = _workflow()["jobs"]
    extension = jobs["extension"]
    assert extension["needs"] == "pypi" and extension["environment"] == "release"
    assert _downloaded(extension) == ["vsix"]
    [step] = [step for step in extension["steps"] if secret in step.get("env", {})]
    assert step["env"] == {secret: f"${{{{ secrets.{secret} }}}}"}
    lines = [line.strip() for line in step["run"].strip().splitlines()]
    assert lines[0] == f'if [ -z "${secret}" ]; then'
    assert lines[1].startswith(f"echo \"::notice title={registry}::not published: the secret {secret}")
    assert lines[2:4] == ["exit 0", "fi"] and "publish" in lines[4] and "dist/*.vsix" in lines[4]
    assert " -p " not in step["run"]  # the tools read the token from the environment, never a command line
    # no other job or step is given a secret
    given = [f"{name}: {value}" for name, job in jobs.items() for place in (job, *job["steps"])
             for value in place.get("env", {}).values() if "secrets." in value]
    assert sorted(given) == ["extension: ${{ secrets.OVSX_PAT }}", "extension: ${{ secrets.VSCE_PAT }}"]


def test_the_release_doc_names_the_trusted_publisher_the_workflow_is() -> None:
    doc = (ROOT / "docs" / "release.md").read_text(encoding="utf-8")
    owner, name = REPOSITORY.removeprefix("https://github.com/").split("/")
    environment = _workflow()["jobs"]["pypi"]["environment"]["name"]
    for value in (owner, name, WORKFLOW.name, environment, "pycapsule-lsp"):
        assert f"`{value}`" in doc, value
    assert "gh attestation verify" in doc and REPOSITORY in doc
