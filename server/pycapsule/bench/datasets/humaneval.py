"""HumanEval, HumanEval-ET and HumanEval+: the prompt is the dataset's own (signature + docstring stub),
with its prose examples written as doctests so the loop can run them (see `examples`).

Only the hidden tests differ: HumanEval's `check(candidate)`, ET's `test_case_list` asserts, and
EvalPlus's inputs compared against the canonical solution's outputs (with the task's `atol`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pycapsule.bench.datasets.examples import with_doctest_outputs_repaired, with_prose_examples_as_doctests
from pycapsule.bench.datasets.files import field, records
from pycapsule.bench.tasks import BenchTask

_PLUS_CHECK = '''
def _pycapsule_plus_check():
    import copy as _copy
    import json as _json

    namespace = {{"__name__": "reference"}}
    exec(compile({reference!r}, "reference.py", "exec"), namespace)
    reference = namespace[{entry_point!r}]
    candidate = {entry_point}
    atol = {atol!r}

    def is_floats(value):
        if isinstance(value, float):
            return True
        return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, float) for v in value)

    def close(got, expected, tol):
        # numpy.allclose's rule (rtol 1e-7), which EvalPlus uses; flat sequences element by element
        if isinstance(expected, (list, tuple)):
            return (type(got) is type(expected) and len(got) == len(expected)
                    and all(close(g, e, tol) for g, e in zip(got, expected)))
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return got == expected
        return abs(got - expected) <= tol + 1e-7 * abs(expected)

    def poly(xs, x):
        return sum(coeff * x ** power for power, coeff in enumerate(xs))

    for number, args in enumerate(_json.loads({inputs!r})):
        expected = reference(*_copy.deepcopy(args))
        got = candidate(*_copy.deepcopy(args))
        if {entry_point!r} == "find_zero":
            ok = abs(poly(*args, got)) <= atol
        else:
            tol = atol if atol else (1e-6 if is_floats(expected) else 0)
            ok = got == expected or (bool(tol) and close(got, expected, tol))
        assert ok, (f"input #{{number}} {{str(args)[:200]}}: "
                    f"expected {{str(expected)[:200]}}, got {{str(got)[:200]}}")


_pycapsule_plus_check()
'''


def _task(dataset: str, row: dict[str, Any], path: Path, hidden_test: str,
          timeout: float = 20.0) -> BenchTask:
    entry_point = field(row, "entry_point", path)
    prompt, rewritten = with_prose_examples_as_doctests(field(row, "prompt", path), entry_point)
    prompt, repaired = with_doctest_outputs_repaired(prompt, entry_point)
    notes = (f"{rewritten} prose examples rewritten as doctests",) if rewritten else ()
    notes += (f"{repaired} doctest outputs written as Python prints them",) if repaired else ()
    return BenchTask(
        dataset=dataset,
        task_id=field(row, "task_id", path),
        entry_point=entry_point,
        prompt=prompt,
        hidden_test=hidden_test,
        reference=prompt + field(row, "canonical_solution", path),
        timeout=timeout,
        notes=notes,
    )


def read_humaneval(path: Path) -> list[BenchTask]:
    tasks = []
    for row in records(path):
        check = f"{field(row, 'test', path)}\n\ncheck({field(row, 'entry_point', path)})\n"
        tasks.append(_task("humaneval", row, path, check))
    return tasks


def read_humaneval_et(path: Path) -> list[BenchTask]:
    return [
        _task("humaneval-et", row, path, "\n".join(field(row, "test_case_list", path)) + "\n", timeout=60.0)
        for row in records(path)
    ]


def read_humaneval_plus(path: Path) -> list[BenchTask]:
    tasks = []
    for row in records(path):
        inputs = field(row, "base_input", path) + field(row, "plus_input", path)
        check = _PLUS_CHECK.format(
            reference=field(row, "prompt", path) + field(row, "canonical_solution", path),
            entry_point=field(row, "entry_point", path),
            atol=float(field(row, "atol", path)),
            inputs=json.dumps(inputs),
        )
        tasks.append(_task("humaneval-plus", row, path, check, timeout=60.0))
    return tasks
