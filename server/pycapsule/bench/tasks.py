"""One benchmark task as the bench sees it: what the model is shown, and what scores it.

The split is the honest-protocol boundary: `prompt` (a module with the function's signature and
docstring) is all the self-debugging loop ever sees; `hidden_test` is appended to the final
candidate only by the scorer, after generation is over.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


class DatasetError(ValueError):
    """A dataset file is missing, unreadable or not in the expected format (one-sentence message)."""


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

    @property
    def prompt_key(self) -> str:
        """Identifies what the model is shown: equal keys mean the generation can be shared."""
        return hashlib.sha256(f"{self.entry_point}\0{self.prompt}".encode()).hexdigest()[:16]
