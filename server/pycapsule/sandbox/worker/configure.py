"""The host's init message applied: paths, privileges and process attributes of the worker."""

import ctypes
import doctest
import os
import signal
import sys

from .runner import NoDebugger

FORWARDED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH")
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38


def prctl(option, value):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except Exception:
        return False


def job_import_path(init):
    """The import path of the job's process: the project's folders first (as pytest's), then the
    interpreter's. The worker itself keeps the one it started with: it imports everything it needs before
    any job, and nothing ever from the project (whose `ctypes.py` or `types.py` would otherwise run in it)."""
    path = [p for p in init["sys_path"] if isinstance(p, str)] if init.get("sys_path") else list(sys.path)
    return [p for p in init.get("sys_path_prepend", []) if isinstance(p, str)] + path


def configure(init):
    """Apply the host's init message: privileges, process attributes."""
    sys.dont_write_bytecode = True
    uid = init.get("uid")
    if isinstance(uid, int) and os.getuid() == 0:
        # bwrap launched by root: become a dedicated uid so RLIMIT_NPROC holds and nothing is root.
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    # Non-dumpable: the job (same uid) cannot ptrace the worker or open /proc/<worker>/fd or mem.
    prctl(PR_SET_DUMPABLE, 0)
    # Orphans of a job (setsid daemons) are re-parented here, where they are killed and reaped.
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Docker's init forwards the signals a job sends to PID 1 on to the worker: ignore those.
    for name in FORWARDED_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    doctest._OutputRedirectingPdb = NoDebugger


class Config:
    def __init__(self, init):
        self.work_root = init.get("work_dir") or "/work"
        self.clean_dirs = [d for d in init.get("clean_dirs", [self.work_root]) if isinstance(d, str)]
        self.own_pid_namespace = bool(init.get("own_pid_namespace"))
        project_dir = init.get("project_dir")
        self.project_dir = project_dir if isinstance(project_dir, str) and project_dir else None
        limits = init.get("limits") or {}
        self.memory = int(limits.get("memory_bytes", 1 << 30))
        self.processes = limits.get("processes")
        self.open_files = int(limits.get("open_files", 256))
        self.file_size = int(limits.get("file_size_bytes", 16 << 20))
        self.stack = int(limits.get("stack_bytes", 8 << 20))
        self.baseline = {}
        self.own_ipc_namespace = bool(init.get("own_ipc_namespace"))
        self.sys_path = job_import_path(init)
        self.keep_pids = frozenset()  # the zygote, once forked
