"""The executor agent: a capsule plus a candidate module source -> a sandbox job -> a verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from threading import Event

from pycapsule.capsule import Capsule
from pycapsule.config import project_root
from pycapsule.debugging.errors import condense, failure_line, headline
from pycapsule.debugging.iterator_examples import IteratorExamples, iterator_failure
from pycapsule.debugging.sandbox_lacks import sandbox_lacks
from pycapsule.doc_examples import examples_in_source
from pycapsule.project import ModuleImport, loose_name, module_import
from pycapsule.sandbox.api import DoctestItem, Job, RunResult, Sandbox


@dataclass(frozen=True)
class Verdict:
    passed: bool
    result: RunResult
    headline: str
    """One line for progress and diagnostics ('' when passed)."""
    condensed: str
    """The few lines the fix prompt gets ('' when passed)."""
    examples_passed: bool = False
    """The examples as written passed (set when only their iterator version failed)."""
    cannot_check: bool = False
    """Every failing example failed only for what the sandbox lacks (`headline` says what)."""

    @property
    def label(self) -> str:
        """'passed', 'not_verified' (only examples the sandbox cannot check failed), 'failed' (doctests ran
        and failed) or the sandbox status ('timeout', 'memory', ...)."""
        if self.passed:
            return "passed"
        if self.cannot_check:
            return "not_verified"
        return "failed" if self.result.status in ("ok", "error") else self.result.status


def doctest_job(source: str, path: Path | None, targets: tuple[str, ...] | None, timeout: float,
                root: Path | None = None, definitions_from: str | None = None) -> Job:
    """The module's top-level code runs first, imported as its project imports it, then the doctests of
    `targets` (None: the whole module, as doctest and pytest find them), then their examples in the
    project's documentation (`pycapsule.doc_examples`).

    `root`: the project folder made readable (default: found from `path`). A text with no file runs as a
    loose `__main__` module. `definitions_from`: a text defining the same functions as `source` (default:
    `source`), read to know which targets documentation can call: the same text for every body a run
    tries, parsed once."""
    if path is None:
        return Job(source=source, filename="capsule.py", doctest_targets=targets, timeout=timeout,
                   project_root=root)
    root = root or project_root(path)
    if root is None:  # a loose file in a shared folder: the sandbox shows nothing but the text itself
        return Job(source=source, filename=path.name, module_name=loose_name(path), doctest_targets=targets,
                   timeout=timeout)
    found = module_import(path, root)
    return Job(
        source=source,
        filename=path.name,
        module_name=found.name,
        doctest_targets=targets,
        timeout=timeout,
        project_root=found.root,
        module_path=found.path,
        import_paths=found.import_paths,
        optionflags=found.optionflags,
        conftests=found.conftests,
        documents=documentation_items(definitions_from or source, found, targets),
    )


def documentation_items(source: str, module: ModuleImport, targets: tuple[str, ...] | None
                        ) -> tuple[DoctestItem, ...]:
    """The documentation examples of the functions and methods among `targets` (None: all of the module's;
    not a class, nor a function nested in another), each reported as its function's (`doc_examples`)."""
    found = examples_in_source(module, source, targets)
    return tuple(doc.item(qualname) for qualname, docs in found.items() for doc in docs)


def job_for(capsule: Capsule, source: str, timeout: float, root: Path | None = None,
            trace_lines: bool = False) -> Job:
    """Only the target's doctests run (`trace_lines`: noting the module's lines they run)."""
    job = doctest_job(source, capsule.path, (capsule.qualname,), timeout, root, capsule.module_source)
    return replace(job, trace_lines=trace_lines)


def judge(capsule: Capsule, result: RunResult) -> Verdict:
    if result.passed:
        return Verdict(True, result, "", "")
    lacks = sandbox_lacks(result, capsule)
    if lacks is not None:
        return Verdict(False, result, lacks, condense(result, capsule), cannot_check=True)
    return Verdict(False, result, headline(result), condense(result, capsule))


def execute(sandbox: Sandbox, capsule: Capsule, source: str, timeout: float, root: Path | None = None,
            cancel: Event | None = None, iterators: IteratorExamples | None = None,
            trace_lines: bool = False) -> Verdict:
    """Run the candidate module `source` (the capsule's module with a new body) and judge it; when its
    examples pass, run `iterators` (the examples with iterators) too, and judge by them. The verdict's
    result is the examples' run as written (its `lines_run` when `trace_lines`)."""
    job = job_for(capsule, source, timeout, root, trace_lines)
    verdict = judge(capsule, sandbox.run(job, cancel))
    if not verdict.passed or iterators is None:
        return verdict
    item = DoctestItem(capsule.qualname, iterators.docstring, capsule.def_line)
    result = replace(sandbox.run(replace(job, doctests=(item,), trace_lines=False), cancel),
                     lines_run=verdict.result.lines_run)  # what the examples as written ran
    if result.passed:
        return verdict
    headline_text, condensed = iterator_failure(iterators, failure_line(result), condense(result, capsule))
    return Verdict(False, result, headline_text, condensed, examples_passed=True)
