"""Throw-away jobs that pay for lazy imports, caches and page faults before a real job needs them."""

import contextlib
import gc
import linecache
import os
import sys

from .cleanup import remove
from .runner import run_job_in_child
from .verdicts import prepare

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
    job = {"source": WARM_UP_SOURCE, "module_name": "__main__", "whole_module": True,
           "doctests": [{"qualname": "warm_up", "docstring": WARM_UP_DOC, "line": 3, "lookup": True}]}
    prepared, _ = prepare(job, "warm_up.py")
    return {**job, "items": [entry.wire() for entry in prepared]}


def prewarm(job_dir):
    """Run a throw-away job so this fresh fork copies the pages a job touches before the real job
    arrives (off the critical path), then forget it."""
    main_module = sys.modules.get("__main__")
    path = os.path.join(job_dir, ".pycapsule-warm-up.py")  # a name no project file links here
    try:
        run_job_in_child(warm_up_job(), path, report=lambda message: None)
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
