"""The module context of a commit (REV's context.py) against the working tree's, in one process. No model.

    prompts REV [DATASET...]   first-attempt prompts (generate_messages + module_context) that differ, per
                               dataset (default: the HumanEval and MBPP families and BigCodeBench)
    realcode REV SDISTS        recall.py's counts on the realcode bench's own functions, for both contexts
                               (SDISTS: the folder holding NAME-VERSION/NAME-VERSION/, as the bench unpacks)

Usage: PYTHONPATH=server python3 docs/results/module-context/compare.py prompts HEAD
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from pycapsule.bench.datasets import load_tasks
from pycapsule.capsule import capsule_by_qualname
from pycapsule.context import module_context
from pycapsule.prompts import generate_messages
from recall import binding_lines, missing_from, stubbed, undefined_in, used_names

_CHECKOUT = Path(__file__).resolve().parents[3]
_DATASETS = ("humaneval", "humaneval-et", "humaneval-plus", "mbpp", "mbpp-et", "bigcodebench")


def context_of(rev: str) -> ModuleType:
    """REV's server/pycapsule/context.py as a module of its own (the rest of the package is the tree's)."""
    source = subprocess.run(["git", "-C", str(_CHECKOUT), "show", f"{rev}:server/pycapsule/context.py"],
                            capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader(f"context_{rev}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:context.py", "exec"), module.__dict__)
    return module


def prompts(rev: str, datasets: list[str]) -> None:
    old = context_of(rev)
    for dataset in datasets:
        _, tasks = load_tasks(dataset)
        changed = []
        for task in tasks:
            capsule = capsule_by_qualname(task.prompt, task.entry_point)
            if generate_messages(capsule, old.module_context(capsule)) != \
                    generate_messages(capsule, module_context(capsule)):
                changed.append(task.task_id)
        print(f"{dataset}: {len(changed)} of {len(tasks)} prompts change {changed}")


def realcode(rev: str, sdists: Path) -> None:
    old = context_of(rev)
    spec = json.loads((_CHECKOUT / "server/pycapsule/bench/datasets/realcode.json").read_text())
    rows: dict[str, list[tuple[set[str], list[str], list[str], int]]] = {"before": [], "after": []}
    differ = 0
    for library in spec["libraries"]:
        folder = f"{library['name']}-{library['version']}"
        for task in library["tasks"]:
            path = sdists / folder / folder / task["file"]
            source = path.read_text(encoding="utf-8")
            real = capsule_by_qualname(source, task["qualname"], path)
            stub = capsule_by_qualname(stubbed(real), task["qualname"], path)
            used, bindings = used_names(real), binding_lines(source)
            contexts = {"before": old.module_context(stub), "after": module_context(stub)}
            differ += contexts["before"] != contexts["after"]
            for name, context in contexts.items():
                rows[name].append((used, missing_from(context, used), undefined_in(context, used, bindings),
                                   len(context)))
    for name, found in rows.items():
        users = [row for row in found if row[0]]
        print(f"{name}: {len(found)} functions, {len(users)} use module names; all shown "
              f"{sum(not row[1] for row in users)}, names {sum(len(r[0]) - len(r[1]) for r in users)}/"
              f"{sum(len(r[0]) for r in users)}; all defined {sum(not row[2] for row in users)}, names "
              f"{sum(len(r[0]) - len(r[2]) for r in users)}; chars median "
              f"{statistics.median(row[3] for row in found):.0f}")
    print(f"contexts that differ: {differ} of {len(rows['after'])}")


if __name__ == "__main__":
    if sys.argv[1] == "prompts":
        prompts(sys.argv[2], sys.argv[3:] or list(_DATASETS))
    else:
        realcode(sys.argv[2], Path(sys.argv[3]))
