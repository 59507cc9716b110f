"""The real-code benchmark: functions stubbed in their libraries' own source trees, scored by their tests.

The libraries' sources are pinned sdists (fetched once by tests/bench/setup.sh into the CI cache); a
test that needs them skips with the reason where they cannot be fetched.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from pycapsule.__main__ import main
from pycapsule.bench.datasets.files import locate
from pycapsule.bench.datasets.realcode import read_realcode, stub
from pycapsule.bench.records import read_records
from pycapsule.bench.tasks import BenchTask, DatasetError
from pycapsule.bench.workspace import DOCUMENTATION, TreeWorkspace, without_tests, workspace
from pycapsule.capsule import capsule_by_qualname
from pycapsule.doc_examples import doc_examples
from pycapsule.sandbox.api import Sandbox

from tests.datasets import tasks_of
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Text

SECRET = "sk-realcode-test-secret-51f0"


@pytest.fixture(scope="module")
def tasks() -> list[BenchTask]:
    return tasks_of("realcode")


def _tests_text(task: BenchTask) -> str:
    assert task.project is not None
    files = {task.project.tree / node.split("::")[0] for node in task.project.tests}
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(files))


# ---- stubbing ---------------------------------------------------------------------------------------


def test_a_stub_keeps_the_signature_and_docstring_and_replaces_only_the_body() -> None:
    source = ('import re\r\n\r\nclass Words:\r\n    def count(self, text: str) -> int:\r\n'
              '        """How many words.\r\n\r\n        >>> Words().count("a b")\r\n'
              '        2\r\n        """\r\n'
              '        found = re.findall(r"\\w+", text)\r\n        return len(found)\r\n\r\n'
              'def after():\r\n    return 1\r\n')
    stubbed = stub(capsule_by_qualname(source, "Words.count"))
    assert stubbed == source.replace(
        '        found = re.findall(r"\\w+", text)\r\n        return len(found)\r\n', "        ...\r\n")
    assert capsule_by_qualname(stubbed, "Words.count").is_stub


def test_a_function_whose_body_shares_its_header_line_is_refused() -> None:
    with pytest.raises(DatasetError, match="on its header's line"):
        stub(capsule_by_qualname("def f(): return 1\n", "f"))


# ---- the task list ----------------------------------------------------------------------------------


def test_the_task_list_pins_four_libraries_and_about_forty_functions_with_methods_among_them() -> None:
    spec = json.loads(locate("realcode").read_text())
    libraries = spec["libraries"]
    assert len(libraries) >= 4
    assert all(len(lib["sha256"]) == 64 and lib["version"][0].isdigit() for lib in libraries)
    entries = [task for lib in libraries for task in lib["tasks"]]
    assert len(entries) >= 40
    assert sum("." in task["qualname"] for task in entries) >= 3  # methods


def test_every_task_is_its_module_with_only_the_targets_body_stubbed(tasks: list[BenchTask]) -> None:
    assert len({task.project.tree for task in tasks if task.project}) >= 4
    for task in tasks:
        assert task.project is not None and task.dataset == "realcode"
        original = capsule_by_qualname(task.reference, task.entry_point)
        prompt = capsule_by_qualname(task.prompt, task.entry_point)
        assert prompt.is_stub and not original.is_stub, task.task_id
        assert (prompt.header, prompt.docstring) == (original.header, original.docstring), task.task_id
        assert task.prompt[: prompt.body_start] == task.reference[: original.body_start]
        assert task.prompt[prompt.body_end:] == task.reference[original.body_end:]
        assert task.reference == (task.project.tree / task.project.file).read_text(encoding="utf-8")


def _module_names(source: str) -> set[str]:
    """Names a module defines at its top level or takes from its sibling modules (relative imports)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def test_most_tasks_show_doctest_examples_and_many_use_other_names_of_their_module(
        tasks: list[BenchTask]) -> None:
    with_examples = [t for t in tasks if capsule_by_qualname(t.prompt, t.entry_point).examples]
    assert len(with_examples) >= 0.9 * len(tasks)
    using_module_names = []
    for task in tasks:
        body = textwrap.dedent(capsule_by_qualname(task.reference, task.entry_point).body)
        used = {node.id for node in ast.walk(ast.parse(body)) if isinstance(node, ast.Name)}
        if used & (_module_names(task.reference) - {task.entry_point.split(".")[-1]}):
            using_module_names.append(task.task_id)
    assert len(using_module_names) >= 0.5 * len(tasks)
    assert any(task_id.endswith("::pluralize") for task_id in using_module_names)  # a module table


def test_no_hidden_test_is_shown_in_a_prompt(tasks: list[BenchTask]) -> None:
    for task in tasks:
        assert task.project is not None
        for node in task.project.tests:
            assert node.split("::")[-1].split("[")[0] not in task.prompt, task.task_id


@pytest.mark.parametrize(("change", "message"), [
    (lambda spec: spec.pop("libraries"), "has no 'libraries' list"),
    (lambda spec: spec["libraries"][0]["tasks"][0].update(tests=["more_itertools/more.py::x"]),
     "not under more-itertools's hidden paths: the model would see it"),
    (lambda spec: spec["libraries"][0]["tasks"][0].update(file="../outside.py"), "not a path inside"),
    (lambda spec: spec["libraries"][0]["tasks"][0].update(qualname="no_such_function"), "no_such_function"),
    (lambda spec: spec["libraries"][0]["tasks"].append(spec["libraries"][0]["tasks"][0]), "twice"),
    pytest.param(lambda spec: spec["libraries"][0].update(sha256="0" * 64), "not the pinned",
                 marks=pytest.mark.slow),  # a real download of the sdist again (pip)
])
def test_a_bad_task_list_is_one_clear_sentence(tasks: list[BenchTask], tmp_path: Path, change: object,
                                               message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = json.loads(locate("realcode").read_text())
    spec["libraries"] = spec["libraries"][:1]
    change(spec)  # type: ignore[operator]
    if "not the pinned" in message:  # an empty cache: the archive is fetched again, checked and refused
        monkeypatch.setenv("PYCAPSULE_SDIST_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "realcode.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(DatasetError) as raised:
        read_realcode(path)
    assert message in str(raised.value) and "\n" not in str(raised.value)


# ---- the workspace ----------------------------------------------------------------------------------


def test_the_model_works_in_a_copy_of_the_tree_that_has_no_tests_and_scoring_puts_them_back(
        tasks: list[BenchTask], tmp_path: Path, sandbox: Sandbox) -> None:
    task = tasks[0]
    assert task.project is not None
    place = TreeWorkspace(task, task.project, tmp_path)
    capsule = place.capsule()
    assert capsule.path is not None and capsule.path.is_relative_to(tmp_path)
    assert capsule.path.read_text(encoding="utf-8") == task.prompt
    copied = {p.relative_to(place.tree) for p in place.tree.rglob("*")}
    for hidden in task.project.hidden:
        assert (task.project.tree / hidden).exists() and not (place.tree / hidden).exists()
        assert not any(Path(hidden) in p.parents for p in copied)
    assert not any(p.name.startswith("test_") for p in copied)
    documentation = [path for path in DOCUMENTATION if (task.project.tree / path).exists()]
    assert documentation, "the library has a README or docs/ whose examples the model must not be given"
    assert not any((place.tree / path).exists() for path in documentation)
    assert doc_examples(capsule.path, capsule.qualname) == ()
    assert place.score(sandbox, task.reference).passed
    assert all((place.tree / hidden).exists() for hidden in task.project.hidden)
    assert all((place.tree / path).exists() for path in documentation)
    assert (task.project.tree / task.project.file).read_text(encoding="utf-8") == task.reference


@pytest.mark.slow
def test_the_library_body_passes_its_hidden_tests_in_the_sandbox_and_the_stub_fails_them(
        tasks: list[BenchTask], sandbox: Sandbox) -> None:
    wrong: dict[str, str] = {}
    for task in tasks:
        with workspace(task) as place:
            canonical = place.score(sandbox, task.reference)
            stubbed = place.score(sandbox, task.prompt)
        if not canonical.passed:
            wrong[task.task_id] = f"the library's own body: {canonical.status} {canonical.detail}"
        elif stubbed.status != "failed" or "hidden test(s) failed" not in stubbed.detail:
            wrong[task.task_id] = f"the stub: {stubbed.status} {stubbed.detail}"
    assert not wrong
    assert Counter(task.task_id.split("/")[0] for task in tasks).most_common()[-1][1] >= 5


# ---- end to end -------------------------------------------------------------------------------------


class RightThenWrong:
    """Answers the first task with its library's own function, every other task with `return None`."""

    def __init__(self, tasks: list[BenchTask]) -> None:
        self.answers = {}
        for number, task in enumerate(tasks):
            original = capsule_by_qualname(task.reference, task.entry_point)
            wrong = f"{original.header}{original.indent}return None\n"
            whole = original.module_source[original.header_start : original.body_end]
            self.answers[original.name] = whole if number == 0 else wrong

    def __call__(self, request: RecordedRequest) -> Text:
        target = re.search(r"def (\w+)\(", request.task_function)
        assert target is not None and target.group(1) in self.answers, request.task_message
        return Text(f"```python\n{self.answers[target.group(1)]}```")


@pytest.mark.slow
def test_realcode_end_to_end_scores_in_the_library_tree_and_never_shows_the_tests(
        tasks: list[BenchTask], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first_two = tasks[:2]
    out = tmp_path / "results"
    with FakeOpenAI(responder=RightThenWrong(first_two)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.delenv("PYCAPSULE_MODEL", raising=False)
        monkeypatch.chdir(tmp_path)
        common = ["bench", "realcode", "--limit", "2", "--out", str(out)]
        assert main([*common, "--max-attempts", "2"]) == 0
        asked = len(server.chat_requests)
        assert main([*common, "--mode", "direct"]) == 0
        assert len(server.chat_requests) == asked  # direct takes self-debugging's first attempts
        requests = server.chat_requests

    [selfdebug] = out.glob("realcode-selfdebug-*.jsonl")
    [direct] = out.glob("realcode-direct-*.jsonl")
    right, wrong = (task.task_id for task in first_two)
    for path in (selfdebug, direct):
        records = read_records(path)
        assert {tid: r.status for tid, r in records.items()} == {right: "passed", wrong: "failed"}, path
        assert "hidden test(s) failed" in records[wrong].detail
        # the library's own body passes its doctests in its package (relative imports and all) at once
        assert (records[right].outcome, records[right].passed_attempt) == ("passed", 1), records[right]
    assert 2 <= asked <= 4

    # the honest protocol: no line of the hidden tests reaches the model
    for task in first_two:
        module_lines = {line.strip() for line in task.reference.splitlines()}
        test_lines = {line.strip() for line in _tests_text(task).splitlines()}
        distinctive = [line for line in test_lines - module_lines if len(line) >= 30]
        assert len(distinctive) >= 10
        for request in requests:
            assert not [line for line in distinctive if line in request.prompt_text], task.task_id

    report = (out / "report.md").read_text()
    assert "realcode" in report
    manifest = json.loads(selfdebug.with_suffix(".json").read_text())
    assert manifest["command"].startswith("pycapsule bench realcode --mode selfdebug")
    for path in out.iterdir():
        assert SECRET not in path.read_bytes().decode("utf-8", "replace")


def test_tasks_in_source_trees_run_one_at_a_time_by_default(tasks: list[BenchTask]) -> None:
    from pycapsule.bench.runner import default_workers

    assert default_workers(tasks) == 1
    assert default_workers(tasks_of("humaneval")[:3]) == default_workers()


def test_without_tests_removes_exactly_the_named_tests_and_keeps_every_class_a_body() -> None:
    source = textwrap.dedent('''\
        import pytest


        @pytest.mark.parametrize("n", [1, 2])
        def test_gone(n):
            assert n


        def test_kept():
            pass


        class TestThing:
            def test_gone_too(self):
                assert 1
    ''')
    stripped = without_tests(source, {"test_gone", "TestThing::test_gone_too"})
    tree = ast.parse(stripped)
    assert [node.name for node in tree.body if hasattr(node, "name")] == ["test_kept", "TestThing"]
    assert "gone" not in stripped and "parametrize" not in stripped
    assert stripped.startswith("import pytest\n") and "def test_kept():\n    pass\n" in stripped


def test_realcode_visible_splits_each_functions_tests_and_shows_only_the_visible_half(
        tmp_path: Path, sandbox: Sandbox) -> None:
    tasks = tasks_of("realcode-visible")
    plain = {task.task_id: task for task in tasks_of("realcode")}
    assert [task.task_id for task in tasks] == list(plain)
    split = [task for task in tasks if task.project is not None and task.project.visible]
    assert len(split) >= 15, "most functions with more than one test show some of them"
    for task in tasks:
        assert task.project is not None
        visible, hidden = set(task.project.visible), set(task.project.tests)
        assert hidden and not visible & hidden and len(hidden) - len(visible) in (0, 1)
        listed = set(plain[task.task_id].project.tests)  # a listed test, or a method of a listed class
        assert all(item in listed or item.rsplit("::", 1)[0] in listed for item in visible | hidden)
    task = split[0]
    assert task.project is not None
    place = TreeWorkspace(task, task.project, tmp_path)
    shown = {f"{file}::{name}" for file in {node.split("::")[0] for node in task.project.tests}
             for name in _test_names((place.tree / file).read_text(encoding="utf-8"))}
    assert set(task.project.visible) <= shown and not set(task.project.tests) & shown
    assert place.score(sandbox, task.reference).passed  # the hidden half is put back for the score


def _test_names(source: str) -> set[str]:
    """'test_f' and 'Class::test_m' for every function and method of a module."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{m.name}" for m in node.body if isinstance(m, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names
