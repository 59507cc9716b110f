"""After every job, nothing of it may survive: kill what it left running, delete what it added below
the writable directories (and undo its permission changes), remove its SysV IPC objects."""

import contextlib
import ctypes
import os
import shutil
import signal
import time


def list_pids():
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            pids.append(int(entry))
    return pids


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None, None
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[0].decode(), int(fields[1])


def direct_children():
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return None


def stray_pids(own_pid_namespace, keep=frozenset()):
    """The processes a job left; never the worker's own zygote (`keep`)."""
    return [pid for pid in _descendants(own_pid_namespace) if pid not in keep]


def _descendants(own_pid_namespace):
    # As a child subreaper the worker inherits every orphan of the job, so its direct children are
    # all that is left (grandchildren come up as their parents die). /proc scans are the fallback.
    children = direct_children()
    if children is not None:
        return children
    me = os.getpid()
    if own_pid_namespace:
        return [p for p in list_pids() if p not in (1, me)]
    by_parent = {}
    for pid in list_pids():
        _, ppid = parent_of(pid)
        if ppid is not None:
            by_parent.setdefault(ppid, []).append(pid)
    found, todo = [], [me]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_strays(config):
    """Kill everything the job left behind; True when none are left."""
    for attempt in range(200):
        alive = []
        for pid in stray_pids(config.own_pid_namespace, config.keep_pids):
            state, _ = parent_of(pid)
            if state in (None, "Z", "X"):
                continue
            alive.append(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()
        if not alive:
            return True
        time.sleep(min(0.001 * (attempt + 1), 0.02))
    return False


def snapshot(directories):
    """Every path below the writable directories as the sandbox started (bind-mount parents live here):
    path -> permission bits for a directory the clean-up searches (so a job's chmod can be undone),
    None for a file or a mount point (searching those is never needed: only the job's additions go)."""
    found = {}
    for top in directories:
        with contextlib.suppress(OSError):
            found[top] = os.lstat(top).st_mode
        for root, dirs, files in os.walk(top):
            found.update((os.path.join(root, name), None) for name in files)
            for name in dirs:
                path = os.path.join(root, name)
                # Mount points (the project's read-only bind, e.g. under /tmp) are part of the starting
                # state: record them, but do not descend into them.
                found[path] = None if os.path.ismount(path) else os.lstat(path).st_mode
            dirs[:] = [d for d in dirs if found[os.path.join(root, d)] is not None]
    return found


def remove(target):
    """Delete a file or a whole tree, also one whose directories the job made unreadable."""
    try:
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, 0o700)  # first: an unreadable top cannot even be listed
            for root, dirs, _ in os.walk(target):
                for name in dirs:
                    with contextlib.suppress(OSError):
                        os.chmod(os.path.join(root, name), 0o700)
            shutil.rmtree(target)
        else:
            os.unlink(target)
    except OSError:
        pass
    return not os.path.lexists(target)


def restore_mode(path, mode):
    """Put back the permission bits a job changed on a directory that was there from the start."""
    try:
        if os.lstat(path).st_mode != mode:
            os.chmod(path, mode & 0o7777)
        return True
    except OSError:
        return False


def restore_directories(directories, baseline):
    """Delete whatever the job added below the writable directories and undo permission changes;
    True when all of it is gone. Only directories that were there at the start are searched: anything
    new goes as a whole."""
    clean = True
    todo = [d for d in directories if baseline.get(d) is not None]
    while todo:
        directory = todo.pop()
        clean = restore_mode(directory, baseline[directory]) and clean
        try:
            entries = list(os.scandir(directory))
        except OSError:
            clean = not os.path.exists(directory) and clean
            continue
        for entry in entries:
            if entry.path not in baseline:
                clean = (not os.path.ismount(entry.path) and remove(entry.path)) and clean
            elif baseline[entry.path] is not None and entry.is_dir(follow_symlinks=False):
                todo.append(entry.path)
    return clean


SYSV_IPC = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
IPC_RMID = 0


def c_library(loaded=[]):  # noqa: B006 (a cache: loaded once per worker)
    if not loaded:
        try:
            loaded.append(ctypes.CDLL(None, use_errno=True))
        except Exception:
            loaded.append(None)
    return loaded[0]


def remove_ipc_objects():
    """Delete every SysV shared-memory segment, message queue and semaphore set of this IPC
    namespace (a private one: only the sandbox's jobs made them); True when none is left.
    POSIX shared memory and message queues are files in /dev/shm and /dev/mqueue (clean dirs)."""
    libc = c_library()
    if libc is None:
        return False
    clean = True
    for kind, call in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 2 or not fields[1].isdigit():
                continue
            ident = int(fields[1])
            function = getattr(libc, call)
            result = function(ident, 0, IPC_RMID, None) if kind == "sem" else function(ident, IPC_RMID, None)
            clean = result == 0 and clean
    return clean


def clean_up(config):
    """After a job: nothing of it may survive. True when that holds."""
    clean = kill_strays(config)
    if config.own_ipc_namespace:
        clean = remove_ipc_objects() and clean
    return restore_directories(config.clean_dirs, config.baseline) and clean
