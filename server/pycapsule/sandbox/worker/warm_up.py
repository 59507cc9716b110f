"""Throw-away jobs that pay for lazy imports, caches and page faults before a real job needs them."""

import contextlib
import gc
import linecache
import os
import sys

from .cleanup import remove
from .runner import run_job_in_child
from .verdicts import Verdicts, prepare

WARM_UP_DOC = '''
    >>> warm_up(1)
    1
    >>> warm_up(0) / 0
    0
    '''


WARM_UP_SOURCE = f'''
def warm_up(x):
    """{WARM_UP_DOC}"""
    return x
'''


def warm_up_job():
    return {"source": WARM_UP_SOURCE, "module_name": "__main__", "whole_module": True,
            "doctests": [{"qualname": "warm_up", "docstring": WARM_UP_DOC, "line": 3, "lookup": True}]}


class OwnWorker:
    """The worker's side of a job in the job's own process, for a warm-up (there is no worker to talk to):
    each answer goes straight to the verdicts, whose next command is the next one run."""

    def __init__(self, job, path):
        prepared, flags = prepare(job, path)
        self.verdicts = Verdicts(prepared, flags, path, whole_module=bool(job.get("whole_module")))
        self.command = None

    def report(self, message):
        self.command = self.verdicts.accept(message)

    def __call__(self):
        command, self.command = self.command, None
        return command


def prewarm(job_dir):
    """Run a throw-away job so this fresh fork copies the pages a job touches before the real job
    arrives (off the critical path), then forget it."""
    main_module = sys.modules.get("__main__")
    path = os.path.join(job_dir, ".pycapsule-warm-up.py")  # a name no project file links here
    try:
        job = warm_up_job()
        worker = OwnWorker(job, path)
        with open(os.devnull, "w") as devnull:
            run_job_in_child(job, path, worker, report=worker.report, out_fd=devnull.fileno())
    finally:
        sys.modules["__main__"] = main_module
        linecache.clearcache()
        with contextlib.suppress(OSError):
            os.unlink(path)


def warm_up(config):
    """Run one job in-process so lazy imports and caches are paid once, then freeze the heap so forked
    children share it instead of copying it."""
    job_dir = os.path.join(config.work_root, "warm-up")
    os.makedirs(job_dir, exist_ok=True)
    prewarm(job_dir)
    remove(job_dir)
    gc.collect()
    gc.freeze()
