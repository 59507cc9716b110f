"""The executor agent: a capsule plus a candidate module source -> a sandbox job -> a verdict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import Capsule
from pycapsule.config import project_root
from pycapsule.debugging.errors import condense, headline
from pycapsule.sandbox.api import Job, RunResult, Sandbox


@dataclass(frozen=True)
class Verdict:
    passed: bool
    result: RunResult
    headline: str
    """One line for progress and diagnostics ('' when passed)."""
    condensed: str
    """The few lines the fix prompt gets ('' when passed)."""

    @property
    def label(self) -> str:
        """'passed', 'failed' (doctests ran and failed) or the sandbox status ('timeout', 'memory', ...)."""
        if self.passed:
            return "passed"
        return "failed" if self.result.status in ("ok", "error") else self.result.status


def module_name_for(path: Path | None) -> str:
    """A real file imports under its own name, so its `if __name__ == "__main__":` block stays quiet."""
    if path is None:
        return "__main__"
    name = path.stem.replace("-", "_")
    return name if name.isidentifier() else "module"


def doctest_job(source: str, path: Path | None, targets: tuple[str, ...] | None, timeout: float,
                root: Path | None = None) -> Job:
    """The module's top-level code runs first, as on import, then the doctests of `targets` (None: all).

    `root`: the project folder made importable (default: found from `path`).
    """
    return Job(
        source=source,
        filename=path.name if path is not None else "capsule.py",
        module_name=module_name_for(path),
        doctest_targets=targets,
        timeout=timeout,
        project_root=root if root is not None else project_root(path),
    )


def job_for(capsule: Capsule, source: str, timeout: float, root: Path | None = None) -> Job:
    """Only the target's doctests run."""
    return doctest_job(source, capsule.path, (capsule.qualname,), timeout, root)


def judge(capsule: Capsule, result: RunResult) -> Verdict:
    if result.passed:
        return Verdict(True, result, "", "")
    return Verdict(False, result, headline(result), condense(result, capsule))


def execute(sandbox: Sandbox, capsule: Capsule, source: str, timeout: float,
            root: Path | None = None) -> Verdict:
    """Run the candidate module `source` (the capsule's module with a new body) and judge it."""
    return judge(capsule, sandbox.run(job_for(capsule, source, timeout, root)))
