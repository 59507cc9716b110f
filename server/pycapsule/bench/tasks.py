"""One benchmark task as the bench sees it: what the model is shown, and what scores it.

The split is the honest-protocol boundary: `prompt` (a module with the function's signature and
docstring) is all the self-debugging loop ever sees; `hidden_test` is appended to the final
candidate only by the scorer, after generation is over.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


class DatasetError(ValueError):
    """A dataset file is missing, unreadable or not in the expected format (one-sentence message)."""


@dataclass(frozen=True)
class ProjectTask:
    """A function left in its library's whole source tree (realcode): generated into a private copy of
    the tree, scored by the library's own tests run with pytest on that copy."""

    tree: Path
    """The unpacked library (shared, never written: each task works on a copy)."""
    file: str
    """The target module, relative to `tree`, e.g. 'more_itertools/more.py'."""
    hidden: tuple[str, ...]
    """The library's test paths: absent from the copy while the model works, put back to score."""
    tests: tuple[str, ...]
    """pytest node ids relative to `tree`: the hidden score."""
    pytest_args: tuple[str, ...] = ()
    visible: tuple[str, ...] = ()
    """Tests of the function left in the copy while the model works (realcode-visible), as the project's
    own tests a user has; never part of the score."""


@dataclass(frozen=True)
class BenchTask:
    dataset: str
    task_id: str
    entry_point: str
    """The function the model fills (a top-level function of `prompt`)."""
    prompt: str
    """The module shown to the model: imports, helpers, and the target's signature + docstring."""
    hidden_test: str
    """Code appended after a candidate module; it raises (AssertionError, ...) when the candidate is wrong."""
    reference: str
    """The canonical solution as a whole module (to check the scorer with; never shown to the model)."""
    timeout: float = 20.0
    """Wall-clock seconds allowed for the hidden tests."""
    libs: tuple[str, ...] = ()
    """Third-party modules the task needs (BigCodeBench)."""
    notes: tuple[str, ...] = ()
    """What the reader had to change in the dataset's own data, e.g. dropped unparsable tests."""
    project: ProjectTask | None = None
    """Set when the function lives in a real source tree (`prompt` is then its whole module, stubbed)."""

    @property
    def prompt_key(self) -> str:
        """Identifies what the model is shown: equal keys mean the generation can be shared."""
        return hashlib.sha256(f"{self.entry_point}\0{self.prompt}".encode()).hexdigest()[:16]
