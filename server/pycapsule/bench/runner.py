"""Running a benchmark: tasks in a bounded thread pool, each generated, scored and appended as it finishes.

Resuming is free: tasks already in the results file (same configuration) are skipped. A task
whose prompt was already answered under the same generation settings in another run in the same
folder (HumanEval, -ET and + share their prompts) reuses that generation and is only re-scored;
a direct run also takes attempt 1 of a self-debugging run with the same first-attempt settings
(the same request, greedy by default), so running selfdebug first makes direct nearly free.
A model failure (endpoint down) is not a task failure: such tasks are not recorded, so a later
resume retries them, and several in a row stop the run.

SIGINT (Ctrl-C) and SIGTERM stop a run the same way (running tasks are cancelled, finished ones kept).
SIGTERM is how to stop a background run: a shell without job control starts `pycapsule bench ... &` with
SIGINT ignored, on purpose (a Ctrl-C meant for the foreground job must not reach it), and the run keeps
that choice.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path

from pycapsule.bench.attempts import first_attempt, fold_events
from pycapsule.bench.records import (
    RecordWriter,
    RunFiles,
    TaskRecord,
    read_manifest,
    read_records,
    results_of,
)
from pycapsule.bench.scorer import SandboxLibraries, sandbox_libraries
from pycapsule.bench.tasks import BenchTask
from pycapsule.bench.workspace import Workspace, workspace
from pycapsule.capsule import CapsuleError
from pycapsule.events import Event
from pycapsule.sandbox.api import Sandbox
from pycapsule.signals import handling

Generate = Callable[..., Iterator[Event]]
"""`generate(capsule, cancel=threading.Event())`: the engine's self-debugging loop."""
Progress = Callable[[TaskRecord], None]

MODEL_FAILURES_IN_A_ROW = 3


def default_workers(tasks: list[BenchTask] | None = None) -> int:
    """Tasks at once: the cores (a local model serializes requests anyway; the sandbox overlaps). One for
    tasks in real source trees: parsing their large modules (~5000 lines) in two threads at once raised
    CPython 3.11's "AST constructor recursion depth mismatch" SystemError here (cf. python/cpython#106905)."""
    if tasks and any(task.project is not None for task in tasks):
        return 1
    return max(1, min(4, os.cpu_count() or 1))


class ModelUnavailable(RuntimeError):
    """The model failed several tasks in a row; the message is the model's last error."""


@dataclass
class RunState:
    """What one invocation did: for the summary line and the exit code."""

    ran: int = 0
    skipped: int = 0
    reused: int = 0
    model_errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reusable:
    record: TaskRecord
    source: str
    """The results file it comes from."""
    first_attempt_only: bool = False
    """A self-debugging generation of which a direct run takes attempt 1."""
    model_label: str | None = None
    """The model that answered, as its run recorded it."""


def reusable_generations(out: Path, generation_hash: str, own: Path,
                         first_attempt_hash: str | None = None) -> dict[str, Reusable]:
    """Generations (by prompt key) from other runs in `out` made with the same generation settings; with
    `first_attempt_hash` (a direct run) also the first attempts of self-debugging runs that share it.
    Published runs of `out` count too (their records are read where their manifests point)."""
    found: dict[str, Reusable] = {}
    firsts: dict[str, Reusable] = {}
    for manifest_path in sorted(out.glob("*.json")):
        manifest = read_manifest(manifest_path)
        if manifest is None or (results := results_of(manifest_path, manifest)) == own:
            continue
        if manifest.get("generation_hash") == generation_hash:
            into, first_only = found, False
        elif first_attempt_hash is not None and manifest.get("first_attempt_hash") == first_attempt_hash:
            into, first_only = firsts, True
        else:
            continue
        label = manifest.get("model_label")
        for record in read_records(results).values():
            usable = record.reused_from is None and record.outcome not in ("", "skipped")
            if usable and (record.attempt_tokens or not first_only):
                into.setdefault(record.prompt_key, Reusable(record, results.name, first_only, label))
    return {**firsts, **found}


class BenchRunner:
    def __init__(self, tasks: list[BenchTask], files: RunFiles, sandbox: Sandbox, generate: Generate,
                 *, workers: int, reuse: dict[str, Reusable] | None = None) -> None:
        self.tasks, self.files, self.sandbox, self.generate = tasks, files, sandbox, generate
        self.workers = max(1, workers)
        self.reuse = reuse or {}
        self.cancel = threading.Event()
        self.state = RunState()
        self._failures_in_a_row = 0
        self._lock = threading.Lock()
        self._libraries: SandboxLibraries | None = None

    def pending(self) -> list[BenchTask]:
        done = read_records(self.files.results)
        return [task for task in self.tasks if task.task_id not in done]

    def libraries(self) -> SandboxLibraries:
        """What the sandbox has of the libraries the pending tasks need (asked once)."""
        if self._libraries is None:
            needed = {lib for task in self.pending() for lib in task.libs}
            self._libraries = sandbox_libraries(self.sandbox, needed)
        return self._libraries

    def missing_libraries(self) -> dict[str, int]:
        """Libraries the pending tasks need that the sandbox cannot import, with how many tasks need each."""
        pending = self.pending()
        missing = self.libraries().missing
        return {lib: sum(lib in task.libs for task in pending) for lib in sorted(missing)}

    def run(self, on_record: Progress | None = None) -> RunState:
        """Run every pending task; raises ModelUnavailable when the model keeps failing (records kept)."""
        pending = self.pending()
        self.state.skipped = len(self.tasks) - len(pending)
        missing = set(self.missing_libraries())
        writer = RecordWriter(self.files.results)
        try:
            # SIGTERM (kill, timeout) stops a run as Ctrl-C does: KeyboardInterrupt here, finished tasks saved
            with (handling(signal.SIGTERM, signal.default_int_handler),
                  ThreadPoolExecutor(self.workers, thread_name_prefix="bench") as pool):
                try:
                    self._drive(pool, pending, missing, writer, on_record)
                except BaseException:
                    self.cancel.set()  # before the pool waits for its running tasks: they stop early
                    raise
        finally:
            writer.close()
        if self._failures_in_a_row >= MODEL_FAILURES_IN_A_ROW:
            raise ModelUnavailable(self.state.model_errors[-1])
        return self.state

    def _drive(self, pool: ThreadPoolExecutor, pending: list[BenchTask], missing: set[str],
               writer: RecordWriter, on_record: Progress | None) -> None:
        queue = iter(pending)
        running: dict[Future[TaskRecord | None], BenchTask] = {}
        while True:
            while len(running) < self.workers and not self.cancel.is_set():
                task = next(queue, None)
                if task is None:
                    break
                running[pool.submit(self._one, task, missing)] = task
            if not running:
                return
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                running.pop(future)
                record = future.result()
                if record is not None:
                    writer.write(record)
                    self.state.ran += 1
                    if on_record is not None:
                        on_record(record)

    def _one(self, task: BenchTask, missing: set[str]) -> TaskRecord | None:
        if self.cancel.is_set():
            return None
        needs = sorted(set(task.libs) & missing)
        if needs:
            return TaskRecord(task.task_id, task.prompt_key, "unscorable", outcome="skipped",
                              detail=f"needs {', '.join(needs)}, not installed where the sandbox runs")
        with workspace(task) as place:
            reused = task.prompt_key in self.reuse
            record = self._reused(task, place) if reused else self._generate(task, place)
            if record is None:
                return None
            if record.status == "unscorable":
                return record
            verdict = place.score(self.sandbox, record.final_code, self.cancel)
        if verdict.status == "cancelled":
            return None  # left for a resume
        record.status, record.detail = verdict.status, verdict.detail
        record.score_seconds = round(verdict.seconds, 3)
        return record

    def _reused(self, task: BenchTask, place: Workspace) -> TaskRecord | None:
        reusable = self.reuse[task.prompt_key]
        record: TaskRecord | None = reusable.record
        if reusable.first_attempt_only:
            record = first_attempt(reusable.record, place.capsule())
        if record is None:
            return self._generate(task, place)
        self.state.reused += 1
        return replace(record, task_id=task.task_id, reused_from=reusable.source)

    def _generate(self, task: BenchTask, place: Workspace) -> TaskRecord | None:
        try:
            capsule = place.capsule()
        except CapsuleError as error:
            return TaskRecord(task.task_id, task.prompt_key, "unscorable", outcome="skipped",
                              detail=f"the prompt cannot be read: {error}")
        record = fold_events(task, capsule, self.generate(capsule, cancel=self.cancel))
        if record.outcome == "cancelled":
            return None
        if record.status == "unscorable":
            return record
        with self._lock:
            if record.outcome == "error":
                # the model, not the code, failed: leave the task for a later resume
                self.state.model_errors.append(f"{task.task_id}: {record.outcome_message}")
                self._failures_in_a_row += 1
                if self._failures_in_a_row >= MODEL_FAILURES_IN_A_ROW:
                    self.cancel.set()
                return None
            self._failures_in_a_row = 0
        return record

