"""Progress of a bench run on stderr: a rich progress bar on a terminal, else one line per task (logs)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from pycapsule.bench.records import TaskRecord


@contextmanager
def progress_reporter(total: int, done: int) -> Iterator[Callable[[TaskRecord], None]]:
    """A callback to call with each finished task's record."""
    console = Console(stderr=True)
    passed = 0
    finished = done
    if not console.is_terminal:

        def log_line(record: TaskRecord) -> None:
            nonlocal passed, finished
            finished += 1
            passed += record.passed
            detail = f": {record.detail[:120]}" if record.detail and not record.passed else ""
            print(
                f"[{finished}/{total}] {record.task_id} {record.status} after {record.attempts} attempt(s), "
                f"{record.generation_seconds + record.score_seconds:.1f} s; {passed} passed so far{detail}",
                file=sys.stderr,
                flush=True,
            )

        yield log_line
        return
    columns = (
        TextColumn("[bold]bench"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[passed]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("tasks", total=total, completed=done, passed="")

        def advance(record: TaskRecord) -> None:
            nonlocal passed
            passed += record.passed
            bar.update(task, advance=1, passed=f"{passed} passed ({record.task_id} {record.status})")

        yield advance
