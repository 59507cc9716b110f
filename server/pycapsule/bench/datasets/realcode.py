"""The real-code benchmark's reader: functions of real libraries, stubbed in their own source trees.

The task list (`realcode.json`, beside this module) names each library's pinned sdist, its test paths
(kept from the model) and, per function, the file, the qualname and the pytest node ids that exercise
it. Each source tree comes from `sdists.source_tree` (downloaded once, checked by SHA-256, cached); the
task's prompt is the function's whole module with that function's body replaced by `...`.

`realcode-visible` is the same list with each function's tests split in two (`split_tests`): the visible
half stays in the tree the model works in, where pycapsule finds it as it finds any project's tests; the
hidden half is the score.
"""

from __future__ import annotations

import ast
import json
from itertools import zip_longest
from pathlib import Path, PurePosixPath
from typing import Any

from pycapsule.bench.datasets.sdists import Sdist, source_tree
from pycapsule.bench.tasks import BenchTask, DatasetError, ProjectTask
from pycapsule.capsule import Capsule, CapsuleError, capsule_by_qualname, read_source_file
from pycapsule.parsing import parse_source

SCORE_TIMEOUT = 120.0
"""Seconds for one task's hidden tests (pytest starting up, collecting the test module, running them)."""


def stub(capsule: Capsule) -> str:
    """The capsule's module with the function's body replaced by `...` (signature and docstring kept)."""
    if capsule.inline_body:
        raise DatasetError(f"{capsule.qualname} has its body on its header's line: choose another function")
    source = capsule.module_source
    return f"{source[: capsule.body_start]}{capsule.indent}...{capsule.newline}{source[capsule.body_end :]}"


def _strings(value: Any, what: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise DatasetError(f"{what} in {path} must be a list of non-empty strings")
    return tuple(value)


def _text(entry: dict[str, Any], key: str, what: str, path: Path) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise DatasetError(f"{what} in {path} has no '{key}' (a non-empty string)")
    return value


def _relative(text: str, what: str, path: Path) -> str:
    """A path inside the tree, in POSIX form; a DatasetError for one that could leave it."""
    pure = PurePosixPath(text)
    if pure.is_absolute() or ".." in pure.parts:
        raise DatasetError(f"{what} in {path} is not a path inside the library's tree: {text}")
    return pure.as_posix()


def _under_hidden(node_id: str, hidden: tuple[str, ...]) -> bool:
    test_file = PurePosixPath(node_id.split("::", 1)[0])
    return any(test_file == PurePosixPath(h) or PurePosixPath(h) in test_file.parents for h in hidden)


def test_items(tree: Path, node_ids: tuple[str, ...]) -> tuple[str, ...]:
    """The node ids one by one: a test class becomes its `test*` methods; other ids stay as they are."""
    items: list[str] = []
    for node_id in node_ids:
        file, _, rest = node_id.partition("::")
        if not rest or "::" in rest:
            items.append(node_id)
            continue
        try:
            module = parse_source((tree / file).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            items.append(node_id)
            continue
        found = [n for n in module.body if isinstance(n, ast.ClassDef) and n.name == rest]
        methods = [f"{node_id}::{m.name}" for c in found for m in c.body
                   if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name.startswith("test")]
        items += methods or [node_id]
    return tuple(dict.fromkeys(items))


def split_tests(items: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(visible, hidden): in sorted order, every second test is visible, the others hidden (the hidden half
    gets the odd one out, so a function with one test keeps it as its score and shows none)."""
    ordered = sorted(items)
    return tuple(ordered[1::2]), tuple(ordered[0::2])


def _library_tasks(library: dict[str, Any], path: Path, visible_half: bool = False) -> list[BenchTask]:
    name = _text(library, "name", "a library", path)
    sdist = Sdist(name, _text(library, "version", name, path), _text(library, "sha256", name, path))
    hidden = tuple(_relative(h, f"{name}'s hidden paths", path)
                   for h in _strings(library.get("hidden"), f"{name}'s 'hidden'", path))
    pytest_args = _strings(library.get("pytest_args", []), f"{name}'s 'pytest_args'", path)
    entries = library.get("tasks")
    if not isinstance(entries, list) or not entries:
        raise DatasetError(f"{name} in {path} has no tasks")
    tree = source_tree(sdist)
    tasks = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise DatasetError(f"a task of {name} in {path} is not an object")
        file = _relative(_text(entry, "file", f"a task of {name}", path), f"a task's file of {name}", path)
        qualname = _text(entry, "qualname", f"{name}'s task in {file}", path)
        task_id = f"{name}/{file}::{qualname}"
        tests = _strings(entry.get("tests"), f"the tests of {task_id}", path)
        if visible := [t for t in tests if not _under_hidden(t, hidden)]:
            raise DatasetError(f"the tests of {task_id} include {visible[0]}, which is not under {name}'s "
                               "hidden paths: the model would see it")
        visible: tuple[str, ...] = ()
        if visible_half:
            visible, tests = split_tests(test_items(tree, tests))
        module = tree / file
        try:
            original = read_source_file(module).text
            capsule = capsule_by_qualname(original, qualname, module)
        except OSError as error:
            raise DatasetError(f"{task_id}: cannot read {module}: {error.strerror or error}") from error
        except CapsuleError as error:
            raise DatasetError(f"{task_id}: {error.message}") from error
        tasks.append(BenchTask(
            dataset="realcode-visible" if visible_half else "realcode",
            task_id=task_id,
            entry_point=qualname,
            prompt=stub(capsule),
            hidden_test="\n".join((*tests, *(f"pytest {arg}" for arg in pytest_args))),
            reference=original,
            timeout=SCORE_TIMEOUT,
            libs=("pytest",),
            project=ProjectTask(tree=tree, file=file, hidden=hidden, tests=tests, pytest_args=pytest_args,
                                visible=visible),
        ))
    return tasks


def read_realcode_visible(path: Path) -> list[BenchTask]:
    """The tasks of `read_realcode`, each function's tests split into a visible and a hidden half."""
    return read_realcode(path, visible_half=True)


def read_realcode(path: Path, visible_half: bool = False) -> list[BenchTask]:
    """The tasks of the list at `path`, one library's after another's in turn (each library's in the list's
    order), fetching the sdists on first use; DatasetError."""
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read the task list {path}: {error}") from error
    libraries = spec.get("libraries") if isinstance(spec, dict) else None
    if not isinstance(libraries, list) or not libraries:
        raise DatasetError(f"{path} has no 'libraries' list: is it a realcode task list?")
    per_library: list[list[BenchTask]] = []
    for library in libraries:
        if not isinstance(library, dict):
            raise DatasetError(f"a library in {path} is not an object")
        per_library.append(_library_tasks(library, path, visible_half))
    # in turn from each library: a partial run, or --limit N, covers every library
    rounds = zip_longest(*per_library)
    tasks = [task for one_round in rounds for task in one_round if task is not None]
    seen: set[str] = set()
    for task in tasks:
        if task.task_id in seen:
            raise DatasetError(f"{path} lists {task.task_id} twice")
        seen.add(task.task_id)
    return tasks
