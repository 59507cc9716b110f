"""Where one task is generated and scored: its prompt alone, or a private copy of its library's tree.

For a task of a real source tree (realcode) the copy holds the stubbed module in its real place, so
the engine generates into a real file of a real package, and none of the library's tests (they are
put back only to score, after generation is over); for realcode-visible, the library's tests less the
hidden half of the function's, as a project's own tests. Its README and docs/ are put back only to score
too: their examples would be the function's (`pycapsule.doc_examples`), and the protocol gives the model
only the prompt's. The copy is deleted when the task is done.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from threading import Event
from typing import Protocol

from pycapsule.bench.pytest_job import pytest_job
from pycapsule.bench.scorer import Score, judge, score
from pycapsule.bench.tasks import BenchTask, ProjectTask
from pycapsule.capsule import Capsule, capsule_by_qualname
from pycapsule.doc_examples import DOC_SUFFIXES, DOCS_FOLDER
from pycapsule.parsing import parse_source
from pycapsule.sandbox.api import Sandbox


class Workspace(Protocol):
    def capsule(self) -> Capsule:
        """What the engine generates into; raises CapsuleError when the prompt cannot be read."""
        ...

    def score(self, sandbox: Sandbox, candidate: str | None, cancel: Event | None = None) -> Score:
        """The hidden tests' verdict on `candidate` (a whole module; None: the model gave no code);
        "cancelled" when `cancel` is set before they end."""
        ...


class PromptWorkspace:
    """A task that is its prompt alone (HumanEval, MBPP, ...): no file, hidden tests appended to it."""

    def __init__(self, task: BenchTask) -> None:
        self.task = task

    def capsule(self) -> Capsule:
        return capsule_by_qualname(self.task.prompt, self.task.entry_point)

    def score(self, sandbox: Sandbox, candidate: str | None, cancel: Event | None = None) -> Score:
        return score(sandbox, self.task, candidate, cancel)


def _readable(path: Path) -> None:
    """The sandbox may run as another uid: the copy must be readable (and its folders listable) by all."""
    for folder, _dirs, files in os.walk(path):
        os.chmod(folder, 0o755)
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                file.chmod(file.stat().st_mode | 0o444)


DOCUMENTATION = (*(f"README{suffix}" for suffix in DOC_SUFFIXES), DOCS_FOLDER)
"""What the tree holds of its documentation examples (paths relative to it), kept out while generating."""


class TreeWorkspace:
    """A task in a copy of its library's source tree, under `scratch`."""

    def __init__(self, task: BenchTask, project: ProjectTask, scratch: Path) -> None:
        self.task, self.project = task, project
        self.tree = scratch / project.tree.name
        hidden = {project.tree / path for path in (*project.hidden, *DOCUMENTATION)}
        shutil.copytree(project.tree, self.tree, symlinks=True,
                        ignore=lambda folder, names: [n for n in names
                                                      if Path(folder) / n in hidden or n == "__pycache__"])
        self.module = self.tree / project.file
        self._write(task.prompt)
        if project.visible:
            self._put_back(project.hidden)
            for file, names in _by_file(project.tests).items():
                path = self.tree / file
                path.write_text(without_tests(path.read_text(encoding="utf-8"), names), encoding="utf-8")
        _readable(scratch)

    def _put_back(self, paths: tuple[str, ...]) -> None:
        """`paths` of the library's tree (its tests, its documentation), as the sdist has them."""
        for path in paths:
            source, target = self.project.tree / path, self.tree / path
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))
            elif source.exists():
                shutil.copy2(source, target)

    def _write(self, source: str) -> None:
        self.module.write_bytes(source.encode("utf-8", "surrogatepass"))

    def capsule(self) -> Capsule:
        return capsule_by_qualname(self.task.prompt, self.task.entry_point, self.module)

    def score(self, sandbox: Sandbox, candidate: str | None, cancel: Event | None = None) -> Score:
        if candidate is None:
            return Score("failed", "no code to score")
        self._write(candidate)
        self._put_back((*self.project.hidden, *DOCUMENTATION))
        _readable(self.tree)
        project = self.project
        job = pytest_job(self.tree, project.file, project.tests, project.pytest_args, self.task.timeout)
        return judge(sandbox.run(job, cancel), self.task)


def _by_file(node_ids: tuple[str, ...]) -> dict[str, set[str]]:
    """'tests/t.py::C::test_m' -> {'tests/t.py': {'C::test_m'}}."""
    found: dict[str, set[str]] = {}
    for node_id in node_ids:
        file, _, name = node_id.partition("::")
        found.setdefault(file, set()).add(name)
    return found


def without_tests(source: str, names: set[str]) -> str:
    """`source` with the test functions and methods `names` ('test_f', 'Class::test_m') replaced by `pass`
    (a class keeps a body), every other line as it was."""
    lines = source.splitlines(keepends=True)
    spans = []
    for node in parse_source(source).body:
        members = [(node.name, node)] if hasattr(node, "name") else []
        if isinstance(node, ast.ClassDef):
            members += [(f"{node.name}::{m.name}", m) for m in node.body if hasattr(m, "name")]
        for name, found in members:
            if name in names:
                first = min([found.lineno, *(d.lineno for d in getattr(found, "decorator_list", ()))])
                spans.append((first, found.end_lineno, found.col_offset))
    for start, end, column in sorted(spans, reverse=True):
        lines[start - 1: end] = [" " * column + "pass\n"]
    return "".join(lines)


@contextmanager
def workspace(task: BenchTask) -> Iterator[Workspace]:
    """The task's workspace for as long as the task runs."""
    if task.project is None:
        yield PromptWorkspace(task)
        return
    with tempfile.TemporaryDirectory(prefix="pycapsule-realcode-") as scratch:
        yield TreeWorkspace(task, task.project, Path(scratch))
