"""The warm-worker machinery every backend shares: start once, run many jobs, replace a dead worker.

A backend only says how to launch a worker (`WarmSandbox._launch`); starting it, talking the
protocol, host-side deadlines, output caps and restarts live here, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pycapsule.sandbox.api import Job, RunResult, SandboxUnavailable
from pycapsule.sandbox.limits import DEFAULT_LIMITS, Limits
from pycapsule.sandbox.protocol import (
    Channel,
    JobCancelled,
    Transport,
    WorkerGarbage,
    WorkerGone,
    WorkerTimeout,
    bootstrap_payload,
)
from pycapsule.sandbox.roots import shared_folder
from pycapsule.sandbox.wire import BadReply, run_result

# Host-side slack over the job's own timeout: the worker needs a moment to kill and clean up.
DEADLINE_GRACE = 2.0
MAX_WORKERS = 4
IDLE_TIMEOUT = 30.0


class WorkerStartFailed(Exception):
    """The worker did not come up; the message says what it printed."""


class WorkerRetired(Exception):
    """The worker could not clean up after its last job (or died between jobs): use a new one."""


def job_message(job: Job, root: Path | None) -> dict[str, Any]:
    """The job as the worker reads it; paths inside the project are sent relative to its root, which each
    backend mounts where it likes."""
    from pycapsule.doctest_items import doctest_items

    items = job.doctests
    if items is None:
        try:
            items = doctest_items(job.source, job.doctest_targets)
        except ValueError:  # a syntax error: the worker reports it when it compiles the module
            items = ()
        items = (*items, *job.documents)
    return {
        "op": "job",
        "source": job.source,
        "filename": Path(job.filename).name or "capsule.py",
        "module_name": job.module_name,
        "module_file": _inside(job.module_path, root),
        "is_package": job.module_path is not None and job.module_path.name == "__init__.py",
        "import_paths": [p for p in (_inside(path, root) for path in job.import_paths) if p is not None],
        "conftests": [p for p in (_inside(path, root) for path in job.conftests) if p is not None],
        "doctests": [dataclasses.asdict(item) for item in items],
        "whole_module": job.doctests is None and job.doctest_targets is None,
        "optionflags": list(job.optionflags),
        "trace_lines": job.trace_lines,
        "timeout": float(job.timeout),
        "output_limit": int(job.output_limit),
    }


def _inside(path: Path | None, root: Path | None) -> str | None:
    """`path` relative to `root` ('.' for the root itself), or None when it is not inside it."""
    if path is None or root is None:
        return None
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def check_job(job: Job) -> str | None:
    """One sentence when the job itself is malformed (a caller bug, reported, not raised)."""
    if not isinstance(job.source, str):
        return "the job's source is not text"
    if not job.timeout or job.timeout <= 0:
        return "the job's timeout must be a positive number of seconds"
    if job.output_limit < 0:
        return "the job's output limit must not be negative"
    if not all(part.isidentifier() for part in job.module_name.split(".")):
        return f"the job's module name {job.module_name!r} is not a Python identifier"
    return None


class WarmWorker:
    """One running worker; not thread-safe by itself (the sandbox holds `lock` around it)."""

    def __init__(self, transport: Transport, init: dict[str, Any], start_timeout: float,
                 root: Path | None = None):
        self.lock = threading.Lock()
        self.root = root
        """The project folder this worker's sandbox shows (job paths are sent relative to it)."""
        self.transport = transport
        self.channel = Channel(transport)
        try:
            transport.send(bootstrap_payload())
            self.channel.send(init)
            ready = self.channel.receive(time.monotonic() + start_timeout, 1 << 16)
        except (WorkerGone, WorkerTimeout, WorkerGarbage) as error:
            reason = transport.diagnostics().strip().splitlines()
            transport.kill()
            why = reason[-1] if reason else (str(error) or type(error).__name__)
            raise WorkerStartFailed(why) from error
        if ready.get("op") != "ready":
            transport.kill()
            raise WorkerStartFailed("the worker answered something other than 'ready'")
        self.alive = True
        self.pending_idle = False

    def wait_until_idle(self) -> None:
        """The worker cleans up and forks the next job process after replying; wait for it to say so."""
        if not self.pending_idle:
            return
        try:
            message = self.channel.receive(time.monotonic() + IDLE_TIMEOUT, 1 << 16)
        except (WorkerGone, WorkerTimeout, WorkerGarbage) as error:
            self.kill()
            raise WorkerRetired(str(error)) from error
        if message.get("op") != "idle":
            self.kill()
            raise WorkerRetired(str(message.get("detail", "retired")))
        self.pending_idle = False

    def run(self, job: Job, warnings: tuple[str, ...], cancel: threading.Event | None = None) -> RunResult:
        self.wait_until_idle()
        started = time.monotonic()
        deadline = started + job.timeout + DEADLINE_GRACE
        max_reply = 8 * job.output_limit + (32 << 20)
        oom_before = self.transport.oom_kills()
        try:
            self.channel.send(job_message(job, self.root))
            reply = self.channel.receive(deadline, max_reply, cancel)
            result = run_result(reply, job, time.monotonic() - started, warnings)
            oom_after = self.transport.oom_kills()
            if result.status == "killed" and oom_before is not None and oom_after != oom_before:
                result = dataclasses.replace(result, status="memory",
                                             detail="killed by the memory limit of the whole sandbox")
        except JobCancelled:
            self.kill()  # the job runs on in it, and its answer would be the next one read
            return self._failure("cancelled", started, warnings, "cancelled before the job ended")
        except WorkerTimeout:
            self.kill()
            return self._failure("timeout", started, warnings,
                                 f"killed after {job.timeout} s wall-clock limit "
                                 "(the sandbox stopped answering and was replaced)")
        except WorkerGone:
            self.kill()
            return self._failure("killed", started, warnings,
                                 "the sandbox worker died during the job (the job may have killed it); "
                                 "it was replaced")
        except (WorkerGarbage, BadReply) as error:
            self.kill()
            return self._failure("crashed", started, warnings,
                                 f"the sandbox worker answered garbage ({error}); it was replaced")
        self.pending_idle = True
        return result

    @staticmethod
    def _failure(status: str, started: float, warnings: tuple[str, ...], detail: str) -> RunResult:
        return RunResult(status=status, duration=time.monotonic() - started, detail=detail,  # type: ignore[arg-type]
                         warnings=warnings)

    def kill(self) -> None:
        self.alive = False
        self.transport.kill()


def private_root(root: Path | None) -> Path | None:
    """The project folder to show the job, or None for a shared folder (see roots.py)."""
    if root is None or shared_folder(root):
        return None
    return root.resolve()


class WarmSandbox(ABC):
    """A Sandbox (see api.py) whose jobs run in pre-forked workers, one per project root."""

    name: str = "?"
    start_timeout: float = 30.0

    def __init__(self, project_root: Path | None = None, limits: Limits = DEFAULT_LIMITS):
        self.project_root = private_root(project_root)
        self.limits = limits
        self._workers: OrderedDict[Path | None, WarmWorker] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    @abstractmethod
    def _launch(self, project_root: Path | None) -> tuple[Transport, dict[str, Any]]:
        """Start a worker process for this backend; returns its transport and the init message."""

    # Whether jobs run as a uid other than the caller's (then the project must be readable by others).
    foreign_uid: bool = False

    def run_warnings(self) -> tuple[str, ...]:
        return ()

    def start_failure_hint(self, reason: str) -> str:
        """What to do about a start failure, when the backend recognises it."""
        return ""

    def root_warnings(self, root: Path | None) -> tuple[str, ...]:
        if root is None:
            return ()
        if not root.is_dir():
            return (f"the project directory {root} does not exist, so nothing can be imported from it",)
        if not self.foreign_uid:
            return ()
        try:
            readable = root.stat().st_mode & 0o005 == 0o005
        except OSError:
            readable = False
        if readable:
            return ()
        return (f"the project directory {root} is not readable by others, so the sandbox (an unprivileged "
                "uid) cannot import from it; chmod o+rX it or run pycapsule as its owner",)

    def start(self) -> None:
        """Bring the default worker up now; raises SandboxUnavailable when it cannot start."""
        try:
            self._worker(self.project_root)
        except WorkerStartFailed as error:
            self.close()
            hint = self.start_failure_hint(str(error))
            raise SandboxUnavailable(
                f"the {self.name} sandbox could not start: {error}" + (f"; {hint}" if hint else "")
            ) from error

    def _worker(self, root: Path | None) -> WarmWorker:
        with self._lock:
            if self._closed:
                raise WorkerStartFailed("the sandbox is closed")
            worker = self._workers.get(root)
            if worker is not None and worker.alive:
                self._workers.move_to_end(root)
                return worker
            try:
                transport, init = self._launch(root)
            except Exception as error:  # an engine error, a missing binary: reported, not raised
                raise WorkerStartFailed(f"{type(error).__name__}: {error}") from error
            worker = WarmWorker(transport, init, self.start_timeout, root)
            self._workers[root] = worker
            while len(self._workers) > MAX_WORKERS:
                _, oldest = self._workers.popitem(last=False)
                with oldest.lock:
                    oldest.kill()
            return worker

    def run(self, job: Job, cancel: threading.Event | None = None) -> RunResult:
        warnings = self.run_warnings()
        problem = check_job(job)
        if problem:
            return RunResult(status="crashed", detail=problem, warnings=warnings)
        if cancel is not None and cancel.is_set():
            return RunResult(status="cancelled", detail="cancelled before the job started", warnings=warnings)
        root = private_root(job.project_root) if job.project_root else self.project_root
        if job.project_root and root is None:
            warnings += (f"{job.project_root} is a shared folder, so the sandbox shows none of it: the "
                         "module cannot import its neighbours there (put it in a project folder)",)
        warnings += self.root_warnings(root)
        started = time.monotonic()
        try:
            if job.fresh:
                return self._run_fresh(job, root, warnings, cancel)
            for _ in range(3):
                worker = self._worker(root)
                with worker.lock:
                    if worker.alive:  # else it died while we waited for the lock: take its successor
                        try:
                            return worker.run(job, warnings, cancel)
                        except WorkerRetired:
                            continue
            raise WorkerStartFailed("the worker kept dying before the job could start")
        except WorkerStartFailed as error:
            return RunResult(status="crashed", duration=time.monotonic() - started, warnings=warnings,
                             detail=f"the {self.name} sandbox could not start: {error}")
        except Exception as error:  # the contract: run never raises
            return RunResult(status="crashed", duration=time.monotonic() - started, warnings=warnings,
                             detail=f"the {self.name} sandbox failed: {type(error).__name__}: {error}")

    def _run_fresh(self, job: Job, root: Path | None, warnings: tuple[str, ...],
                   cancel: threading.Event | None) -> RunResult:
        try:
            transport, init = self._launch(root)
        except Exception as error:
            raise WorkerStartFailed(f"{type(error).__name__}: {error}") from error
        worker = WarmWorker(transport, init, self.start_timeout, root)
        try:
            return worker.run(job, warnings, cancel)
        finally:
            worker.kill()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            with contextlib.suppress(Exception):
                worker.kill()

    def __enter__(self) -> WarmSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
