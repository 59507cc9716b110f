"""`--shard I/N`: one machine's share of a run's tasks, by position, and which shards a manifest holds.

Shard I of N is the tasks at positions I, I+N, I+2N, ... (1-based, after --limit): every shard gets a
mix of early and late tasks, and the shards of one N cover each task exactly once. A shard is not part
of a run's identity: its records go under the same hash as the whole run, so the shards of one
configuration, run anywhere, are one run (`pycapsule bench merge` joins their folders).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

SHARDS_KEY = "shards"
"""The manifest's list of the shards it holds ("1/2", ...); absent when it holds the whole run."""

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based."""
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def select(self, tasks: Sequence[T]) -> list[T]:
        """The tasks of this shard, in their order."""
        return list(tasks[self.index - 1 :: self.count])


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`I/N` with 1 <= I <= N, or `auto/N`, I then from the scheduler that started this process
    (`scheduled_index`); raises ValueError with one sentence otherwise."""
    expected = "expected I/N with 1 <= I <= N (e.g. 1/2: the first of two shards) or auto/N"
    match = re.fullmatch(r"([0-9]+|auto)/([0-9]+)", text.strip())
    if match is None:
        raise ValueError(f"{expected}, not {text!r}")
    automatic = match[1] == "auto"
    index = scheduled_index(os.environ if environ is None else environ) if automatic else int(match[1])
    count = int(match[2])
    if not 1 <= index <= count:
        where = f"the scheduler's index makes it {index}/{count}" if automatic else f"not {text!r}"
        raise ValueError(f"{expected}: {where}")
    return Shard(index, count)


_SCHEDULERS = (("JOB_COMPLETION_INDEX", None), ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN"))
"""The variable that numbers this process among its siblings, and the one holding the first number (None:
it counts from 0): a Kubernetes Indexed Job's, a Slurm job array's."""


def scheduled_index(environ: Mapping[str, str]) -> int:
    """This process's 1-based shard index as the scheduler that started it numbers it: a Kubernetes Indexed
    Job's $JOB_COMPLETION_INDEX (0, 1, ...), or a Slurm job array's $SLURM_ARRAY_TASK_ID counted from
    $SLURM_ARRAY_TASK_MIN. Raises ValueError (one sentence) when neither is set."""
    for variable, first_variable in _SCHEDULERS:
        value = environ.get(variable, "").strip()
        if not value:
            continue
        first = environ.get(first_variable, "").strip() if first_variable else "0"
        if not (value.isdigit() and first.isdigit()):
            raise ValueError(f"--shard auto: ${variable} is {value!r}, not a task index")
        return int(value) - int(first) + 1
    raise ValueError("--shard auto/N takes its index from a Kubernetes Indexed Job ($JOB_COMPLETION_INDEX) "
                     "or a Slurm job array ($SLURM_ARRAY_TASK_ID), and neither is set here; give it as I/N")


def shard_sort_key(label: str) -> tuple[int, int]:
    index, _, count = label.partition("/")
    return (int(count), int(index)) if index.isdigit() and count.isdigit() else (0, 0)


def held_shards(previous: dict[str, Any] | None, shard: Shard | None) -> list[str] | None:
    """What a manifest holds once this invocation has run: None for the whole run (an unsharded run, or a
    folder that already held it), else the shards that ran into it so far, this one included."""
    if shard is None:
        return None
    if previous is not None and SHARDS_KEY not in previous:
        return None
    earlier = list((previous or {}).get(SHARDS_KEY) or [])
    return sorted({*earlier, shard.label}, key=shard_sort_key)


def union_of_shards(held: Sequence[list[str] | None]) -> list[str] | None:
    """The shards several manifests hold together (None: one of them holds the whole run)."""
    if any(part is None for part in held):
        return None
    return sorted({label for part in held for label in part or ()}, key=shard_sort_key)
