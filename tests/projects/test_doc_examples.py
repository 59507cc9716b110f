"""A function's examples in the project's documentation count as its examples: the README's and docs/'
doctest blocks that call it run in the sandbox against the candidate, with the docstring's, in `check`
(text and `--json`), in `generate` (the verdict, the failure fed back, the prompt) and in the editor's
diagnostics, and are named by file and line (`README.md:7`). A function the docs never call is unaffected,
and pytest's own `--doctest-glob` gives the documentation files the same verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.editor import Editor
from tests.projects import builders
from tests.projects.cli import check_json, generate_json, pycapsule
from tests.projects.test_language_server import open_file

RIGHT = "return SEPARATOR.join(title.lower().split())"
WRONG = "return SEPARATOR.join(title.split())"
RIGHT_ANSWER = f"```python\ndef slugify(title):\n    {RIGHT}\n```"
WRONG_ANSWER = f"```python\ndef slugify(title):\n    {WRONG}\n```"


def line_in(path: Path, needle: str) -> int:
    """1-based line of the first line of `path` holding `needle`."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.fixture
def slugs(project: Path) -> Path:
    return builders.documented_package(project)


def with_body(module: Path, body: str) -> None:
    module.write_text(module.read_text().replace(RIGHT, body))


def test_check_runs_the_readme_and_docs_examples_of_a_function_without_examples_of_its_own(
        tmp_path: Path, slugs: Path) -> None:
    code, report = check_json(f"{slugs}::slugify", tmp_path)

    [function] = report["functions"]
    assert (code, function["verdict"], function["attempted"], function["failed"]) == (0, "passed", 5, 0)
    assert (function["documents"], function["documented"]) == (["README.md", "docs/usage.rst"], 5)
    shown = pycapsule("check", str(slugs), home=tmp_path).stdout
    assert "PASS  slugify (5 examples, 5 of them in README.md, docs/usage.rst)" in shown


def test_a_wrong_body_fails_naming_the_documentation_file_and_line(
        tmp_path: Path, project: Path, slugs: Path) -> None:
    with_body(slugs, WRONG)
    line = line_in(project / "README.md", 'slugify("Hello World")')

    code, report = check_json(f"{slugs}::slugify", tmp_path)

    [function] = report["functions"]
    assert (code, function["verdict"], function["failed"]) == (1, "failed", 3)
    first = function["failures"][0]
    assert (first["document"], first["line"], first["got"]) == ("README.md", line, "'Hello-World'\n")
    shown = pycapsule("check", f"{slugs}::slugify", home=tmp_path).stdout
    assert f'README.md:{line}: >>> slugify("Hello World")' in shown, shown


def test_a_function_the_docs_never_call_is_unaffected(tmp_path: Path, slugs: Path) -> None:
    code, report = check_json(str(slugs), tmp_path)

    by_name = {f["qualname"]: f for f in report["functions"]}
    assert code == 0 and set(by_name) == {"slugify", "shout"}, "initials has no examples anywhere"
    assert (by_name["shout"]["attempted"], by_name["shout"]["documents"]) == (1, [])
    assert report["summary"]["passed"] == 2


def test_the_projects_doctest_option_flags_apply_to_the_documentation(tmp_path: Path, project: Path) -> None:
    module = builders.documented_package(project, normalize_whitespace=False)
    line = line_in(project / "docs/usage.rst", "for title in")

    code, report = check_json(f"{module}::slugify", tmp_path)

    [function] = report["functions"]
    [failure] = function["failures"]
    assert (code, failure["document"], failure["line"]) == (1, "docs/usage.rst", line)


def test_a_module_without_examples_of_its_own_is_checked_for_its_documentation(
        tmp_path: Path, project: Path, slugs: Path) -> None:
    slugs.write_text(slugs.read_text().replace('">>> shout("hi")\n', ""))
    shout = slugs.read_text().split("def shout", 1)[1]
    slugs.write_text(slugs.read_text().replace(shout, '(title):\n    return title.upper()\n'))
    with_body(slugs, WRONG)
    assert ">>>" not in slugs.read_text()

    result = pycapsule("check", str(project), home=tmp_path)

    assert result.returncode == 1
    assert "src/textkit/slugs.py::slugify: 3 of 5 examples failed" in result.stdout, result.stdout


def test_generate_passes_only_a_body_whose_documentation_examples_pass(
        tmp_path: Path, project: Path, slugs: Path, fake: FakeOpenAI) -> None:
    slugs.write_text(slugs.read_text().replace(f"    {RIGHT}\n", "    ...\n"))
    readme_line = line_in(project / "README.md", 'slugify("Hello World")')
    fake.queue(WRONG_ANSWER, RIGHT_ANSWER)

    code, report, stderr = generate_json(f"{slugs}::slugify", tmp_path, fake.base_url, "--write")

    [result] = report["results"]
    assert (code, result["status"], result["attempts"]) == (0, "passed", 2), stderr
    readme = line_in(project / "README.md", ">>> from")
    usage = line_in(project / "docs/usage.rst", ">>> import")
    assert result["verified_by"] == f"5 documentation examples (README.md:{readme}, docs/usage.rst:{usage})"
    assert f"README.md:{readme_line}" in stderr
    assert f"    {RIGHT}\n" in slugs.read_text()
    first, second = (json.dumps(request.body) for request in fake.chat_requests)
    assert "The project's documentation shows `slugify` in use" in first
    assert 'slugify(\\"Hello World\\")' in first
    assert f"(README.md:{readme_line}) expected 'hello-world', got 'Hello-World'" in second


def test_generate_gives_up_when_no_answer_passes_the_documentation(
        tmp_path: Path, project: Path, slugs: Path, fake: FakeOpenAI) -> None:
    slugs.write_text(slugs.read_text().replace(f"    {RIGHT}\n", "    ...\n"))
    before = slugs.read_text()
    fake.queue(WRONG_ANSWER, WRONG_ANSWER.replace("title.split()", "title.upper().split()"))

    code, report, _ = generate_json(f"{slugs}::slugify", tmp_path, fake.base_url, "--write")

    assert ([r["status"] for r in report["results"]], code) == (["gave_up"], 1)
    assert slugs.read_text() == before


async def test_a_failing_documentation_example_is_diagnosed_on_the_def_line_naming_its_place(
        editor: Editor, project: Path) -> None:
    module = builders.documented_package(project)
    with_body(module, WRONG)
    readme_line = line_in(project / "README.md", 'slugify("Hello World")')
    uri = open_file(editor, module)

    found = await editor.diagnostics_for(uri, bool, timeout=30)

    def_line = line_in(module, "def slugify") - 1
    readme = [d for d in found if d.message.startswith("README.md")]
    assert [(d.range.start.line, d.message) for d in readme] == [(def_line, (
        f"README.md:{readme_line} (the project's documentation): doctest failed: expected 'hello-world', "
        "got 'Hello-World'"))]
    [related] = readme[0].related_information or []
    assert related.location == types.Location(
        (project / "README.md").as_uri(),
        types.Range(types.Position(readme_line - 1, 0), types.Position(readme_line, 0)))


def pytest_doctest_glob(root: Path) -> dict[str, str]:
    """pytest's own verdict on the documentation files: `--doctest-glob='*.md' --doctest-glob='*.rst'`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    report = root.parent / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "--doctest-glob=*.md", "--doctest-glob=*.rst", "-p",
                    "no:cacheprovider", "-q", f"--junitxml={report}", "README.md", "docs/usage.rst"],
                   cwd=root, env=env, capture_output=True, text=True, timeout=120)
    from xml.etree import ElementTree

    return {case.get("name", ""): "failed" if case.find("failure") is not None else "passed"
            for case in ElementTree.parse(report).iter("testcase")}


@pytest.mark.slow
@pytest.mark.parametrize("body", [RIGHT, WRONG], ids=["right", "wrong"])
def test_pytest_doctest_glob_agrees_with_check(tmp_path: Path, project: Path, slugs: Path, body: str) -> None:
    with_body(slugs, body)

    _, report = check_json(f"{slugs}::slugify", tmp_path)
    reference = pytest_doctest_glob(project)

    [function] = report["functions"]
    failing = {failure["document"] for failure in function["failures"]}
    ours = {document: "failed" if document in failing else "passed" for document in function["documents"]}
    assert ours == {"README.md": reference["README.md"], "docs/usage.rst": reference["usage.rst"]}, reference
    assert set(reference.values()) == ({"passed"} if body == RIGHT else {"failed"})
