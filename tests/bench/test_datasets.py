"""The dataset readers: what the model is shown, what stays hidden, and clear errors on bad files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from pycapsule.bench.datasets import DATASETS, load_tasks
from pycapsule.bench.datasets.mbpp import build_stub, entry_point_of, example_doctest
from pycapsule.bench.tasks import DatasetError
from pycapsule.capsule import capsule_by_qualname

from tests.datasets import tasks_of

SIZES = {"humaneval": 164, "humaneval-et": 164, "humaneval-plus": 164, "mbpp": 427, "mbpp-et": 397,
         "bigcodebench": 1140, "realcode": 45, "realcode-visible": 45}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_task_gives_a_readable_stub_of_its_entry_point(dataset: str) -> None:
    tasks = tasks_of(dataset)
    assert len(tasks) == SIZES[dataset]
    assert len({task.task_id for task in tasks}) == len(tasks)
    for task in tasks:
        capsule = capsule_by_qualname(task.prompt, task.entry_point)
        assert capsule.qualname == task.entry_point
        assert task.hidden_test.strip()


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_hidden_tests_never_appear_in_the_prompt(dataset: str) -> None:
    for task in tasks_of(dataset):
        assert task.hidden_test.strip() not in task.prompt
        if dataset.startswith("humaneval"):
            assert "def check(" not in task.prompt
            assert task.reference.startswith(task.prompt)


def test_humaneval_variants_show_the_model_the_same_prompts_so_generations_can_be_shared() -> None:
    keys = {dataset: {t.task_id: t.prompt_key for t in tasks_of(dataset)}
            for dataset in ("humaneval", "humaneval-et", "humaneval-plus")}
    assert keys["humaneval"] == keys["humaneval-et"]
    differing = [tid for tid in keys["humaneval"] if keys["humaneval"][tid] != keys["humaneval-plus"][tid]]
    assert differing == ["HumanEval/115"]  # EvalPlus fixed this prompt


def test_mbpp_stub_takes_name_and_parameters_from_the_first_test_and_shows_only_that_test() -> None:
    task = next(t for t in tasks_of("mbpp") if t.task_id == "Mbpp/4")
    capsule = capsule_by_qualname(task.prompt, task.entry_point)
    assert capsule.header.strip() == "def heap_queue_largest(lst, n):"
    assert [(e.source.strip(), e.want.strip()) for e in capsule.examples] == [
        ("heap_queue_largest([25, 35, 22, 85, 14, 65, 75, 22, 58], 3)", "[85, 75, 65]")]
    assert "heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],2)" in task.hidden_test
    assert "2)" not in task.prompt.split(">>>")[1]


def test_mbpp_example_shows_the_value_only_when_its_repr_is_what_a_right_answer_prints() -> None:
    assert example_doctest("assert f(1, 'a') == [1, 'a']", "f") == ("f(1, 'a')", "[1, 'a']")
    assert example_doctest('assert f(2)==False', "f") == ("f(2)", "False")
    # 5 == 5.0 and set order: printing would be stricter than the test, so compare instead
    assert example_doctest("assert f(2) == 5.0", "f") == ("f(2) == 5.0", "True")
    assert example_doctest("assert set(f(x)) == set((4, 5))", "f") == ("set(f(x)) == set((4, 5))", "True")
    assert example_doctest("assert isclose(f(3), 27.0)", "f") == ("bool(isclose(f(3), 27.0))", "True")
    with pytest.raises(DatasetError, match="not a single assert"):
        example_doctest("print(f(1))", "f")


def test_mbpp_stub_escapes_backslashes_and_quotes_so_the_doctest_reads_back_unchanged() -> None:
    stub = build_stub("Remove \\n from text.", 'assert clean("a\\nb") == "ab"', "clean", ["import re"])
    capsule = capsule_by_qualname(stub, "clean")
    assert stub.startswith("import re\n\n\ndef clean(text):")
    assert [(e.source.strip(), e.want.strip()) for e in capsule.examples] == [("clean('a\\nb')", "'ab'")]


def test_mbpp_entry_point_may_shadow_a_builtin_when_the_reference_defines_it() -> None:
    assert entry_point_of(["assert sum(10,15) == 6"], "def sum(a, b):\n    return 6\n") == "sum"
    assert entry_point_of(["assert len(foo([1])) == 1"], "") == "foo"


def test_mbpp_et_drops_unparsable_tests_and_says_so() -> None:
    task = next(t for t in tasks_of("mbpp-et") if t.task_id == "Mbpp/160")
    assert task.notes == ("dropped 38 tests that are not valid Python",)
    compile(task.hidden_test, "hidden", "exec")


def test_bigcodebench_lists_only_third_party_libraries() -> None:
    task = next(t for t in tasks_of("bigcodebench") if t.task_id == "BigCodeBench/0")
    assert task.libs == ()
    assert {"pandas", "numpy"} & {lib for t in tasks_of("bigcodebench") for lib in t.libs}


def test_a_missing_file_is_one_clear_sentence(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no mbpp data at .*nothing.json"):
        load_tasks("mbpp", tmp_path / "nothing.json")


def test_a_directory_is_searched_for_the_usual_file_name(tmp_path: Path) -> None:
    row = {"task_id": 1, "prompt": "Return one.", "code": "def one():\n    return 1\n",
           "test_imports": [], "test_list": ["assert one() == 1"]}
    (tmp_path / "sanitized-mbpp.json.gz").write_bytes(gzip.compress(json.dumps([row]).encode()))
    path, tasks = load_tasks("mbpp", tmp_path)
    assert path.name == "sanitized-mbpp.json.gz" and [t.task_id for t in tasks] == ["Mbpp/1"]


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "is not JSON"),
    ('[{"task_id": 1}]', "has no 'test_list' field"),
    ("[1, 2]", "holds a int where a task object"),
])
def test_a_malformed_file_is_one_clear_sentence(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DatasetError, match=message):
        load_tasks("mbpp", path)
