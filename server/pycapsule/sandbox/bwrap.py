"""The bubblewrap backend: a warm worker in a bwrap sandbox with no network and a read-only system.

Inside: the host's own interpreter and its installed packages (read-only, at their host paths),
the project root (read-only, at its host path), a private tmpfs work dir and /tmp, a new /proc
and /dev, new pid/net/ipc/uts namespaces and an empty environment.

Run as root, bwrap is privileged and maps the sandbox to uid 0, for which the kernel ignores
RLIMIT_NPROC; so the worker starts with only CAP_SETUID/CAP_SETGID and drops for good to a
dedicated uid, unique per sandbox (no passwd entry, owns no host file). Run as a normal user,
bwrap is unprivileged: a user namespace with further user namespaces disabled.

`launch_as` runs bwrap as another, unprivileged account (root can thereby give the sandbox exactly
what an ordinary user's gets: the tests run the hostile suite so), with an interpreter that account
can read (`python`).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any

from pycapsule.sandbox.api import SandboxUnavailable
from pycapsule.sandbox.cgroup import PREFIX as CGROUP_PREFIX
from pycapsule.sandbox.cgroup import SandboxCgroup
from pycapsule.sandbox.cgroup import create as create_cgroup
from pycapsule.sandbox.host_python import clean_import_path, covering_dirs, interpreter, interpreter_dirs
from pycapsule.sandbox.job_limits import (
    MemoryWatchdog,
    scope_cgroup,
    scope_environment,
    user_scope_prefix,
    user_scope_works,
)
from pycapsule.sandbox.limits import DEFAULT_LIMITS, Limits
from pycapsule.sandbox.local_process import ProcessTransport
from pycapsule.sandbox.protocol import BOOTSTRAP, Transport
from pycapsule.sandbox.seccomp import filter_program
from pycapsule.sandbox.warm import WarmSandbox

WORK_DIR = "/sandbox-work"
UNBINDABLE = (Path("/proc"), Path("/dev"), Path(WORK_DIR))
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives", "ssl", "ca-certificates",
    "python3", f"python3.{sys.version_info.minor}", "nsswitch.conf", "mime.types", "os-release",
)
INSTALL_HINT = "install it with `apt-get install bubblewrap` (Fedora: `dnf install bubblewrap`)"
SANDBOX_UID_RANGE = (1_000_000, 2_000_000_000)
NAMESPACE_ERRORS = ("uid map", "new namespace", "Operation not permitted", "Permission denied")
JOIN_CGROUPS = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}.")
    return path


def user_process_count(uid: int | None = None) -> int:
    uid = os.getuid() if uid is None else uid
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


class MountPlan:
    """bwrap arguments for a root built from read-only binds, with parent dirs made traversable."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.mounted: list[Path] = [Path("/usr"), Path("/etc")]
        self.created: set[Path] = set()

    def _covered(self, path: Path) -> bool:
        return any(path == m or m in path.parents for m in self.mounted)

    def ro_bind(self, path: Path) -> None:
        hidden = any(path == p or p in path.parents for p in UNBINDABLE)
        if path == Path("/") or hidden or self._covered(path):
            return
        for parent in reversed(path.parents):
            if str(parent) == "/" or parent in self.created or self._covered(parent):
                continue
            # bwrap creates missing parents 0700; the dedicated uid must be able to traverse them.
            self.args += ["--perms", "0755", "--dir", str(parent)]
            self.created.add(parent)
        self.args += ["--ro-bind", str(path), str(path)]
        self.mounted.append(path)


def system_args() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


class BwrapSandbox(WarmSandbox):
    name = "bwrap"
    start_timeout = 20.0

    def __init__(self, project_root: Path | None = None, limits: Limits = DEFAULT_LIMITS, *,
                 launch_as: str | None = None, python: str | None = None):
        super().__init__(project_root, limits)
        self.bwrap = find_bwrap()
        self.launch_as = pwd.getpwnam(launch_as) if launch_as else None
        if self.launch_as is not None and not shutil.which("setpriv"):
            raise SandboxUnavailable("setpriv (util-linux) is needed to launch the sandbox as another user.")
        self.python = python
        self.as_root = os.geteuid() == 0 and self.launch_as is None
        self.foreign_uid = self.as_root or self.launch_as is not None
        self._launches = 0
        self.whole_job_limit = "cgroup" if self.as_root else "watchdog"
        """How the whole sandbox's memory is capped (see job_limits.py); set at each launch."""
        self.uid = secrets.randbelow(SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]) + SANDBOX_UID_RANGE[0]

    def start_failure_hint(self, reason: str) -> str:
        if reason.startswith("bwrap:") and any(text in reason for text in NAMESPACE_ERRORS):
            return (
                "unprivileged user namespaces look disabled here: on Ubuntu 23.10+ AppArmor allows them "
                "only to the distribution's own /usr/bin/bwrap (or set "
                "kernel.apparmor_restrict_unprivileged_userns=0), elsewhere set "
                "kernel.unprivileged_userns_clone=1, or use --backend docker"
            )
        return ""

    def command(self, project_root: Path | None, seccomp_fd: int | None = None) -> list[str]:
        scratch = str(self.limits.scratch_bytes)
        args = [self.bwrap, "--die-with-parent", "--new-session", "--clearenv",
                "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
                "--setenv", "HOME", WORK_DIR, "--setenv", "LANG", "C.UTF-8",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox"]
        if self.as_root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user", "--disable-userns"]
        args += system_args()
        # /dev/shm (POSIX shared memory and semaphores) is a capped tmpfs and /dev/mqueue the IPC
        # namespace's own message queues: both are emptied after every job, like /tmp.
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", scratch, "--tmpfs", "/dev/shm", "--mqueue", "/dev/mqueue",
                 "--perms", "1777", "--size", scratch, "--tmpfs", "/tmp",
                 "--perms", "0777", "--size", scratch, "--tmpfs", WORK_DIR]
        plan = MountPlan()
        roots = [*interpreter_dirs(self.python), *(Path(p) for p in clean_import_path(self.python))]
        if project_root is not None:
            roots.append(project_root)
        for path in covering_dirs(roots):
            plan.ro_bind(path)
        args += plan.args
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--remount-ro", "/", "--chdir", WORK_DIR,
                 "--", interpreter(self.python), "-I", "-c", BOOTSTRAP]
        return args

    def _launch(self, project_root: Path | None) -> tuple[Transport, dict[str, Any]]:
        limits = self.limits.to_wire()
        init: dict[str, Any] = {
            "op": "init",
            "sys_path": ([str(project_root)] if project_root else []) + list(clean_import_path(self.python)),
            "project_dir": str(project_root) if project_root else None,
            "work_dir": WORK_DIR,
            "clean_dirs": [WORK_DIR, "/tmp", "/dev", "/dev/shm", "/dev/mqueue"],
            "own_pid_namespace": True,
            "own_ipc_namespace": True,
            "limits": limits,
        }
        if self.as_root:
            init["uid"] = self.uid
        else:
            # RLIMIT_NPROC counts every process of this uid, also those outside the sandbox.
            uid = self.launch_as.pw_uid if self.launch_as is not None else None
            limits["processes"] = user_process_count(uid) + self.limits.processes
        self._launches += 1
        cgroup = None
        if self.as_root:
            cgroup = create_cgroup(f"{CGROUP_PREFIX}{self.uid}-{os.getpid()}-{self._launches}",
                                   self.limits.sandbox_memory_bytes, self.limits.processes + 8)
        scope = cgroup is None and self.launch_as is None and user_scope_works()
        watchdog = MemoryWatchdog(self.limits.sandbox_memory_bytes) if cgroup is None and not scope else None
        self.whole_job_limit = "cgroup" if cgroup is not None else "user-scope" if scope else "watchdog"
        program = filter_program(refuse_sysv_queues_and_shm=watchdog is not None)
        seccomp_fd = None
        if program is not None:
            seccomp_fd, write_end = os.pipe()
            os.write(write_end, program)
            os.close(write_end)
        command = self.command(project_root, seccomp_fd)
        if self.launch_as is not None:
            command = ["setpriv", f"--reuid={self.launch_as.pw_uid}", f"--regid={self.launch_as.pw_gid}",
                       "--init-groups", "--", *command]
        if cgroup is not None:
            # The shell joins the cgroup, then becomes bwrap: everything in the sandbox starts inside it.
            command = ["/bin/sh", "-c", JOIN_CGROUPS, "sh", *cgroup.procs_files, "--", *command]
        if scope:
            command = [*user_scope_prefix(self.limits.sandbox_memory_bytes, self.limits.processes + 8),
                       *command]
        scope_cgroups: list[SandboxCgroup | None] = []

        def scope_oom_kills() -> int | None:
            if not scope_cgroups:
                scope_cgroups.append(scope_cgroup(transport.process.pid))
            return scope_cgroups[0].oom_kills() if scope_cgroups[0] is not None else None

        on_kill = cgroup.remove if cgroup is not None else watchdog.stop if watchdog is not None else None
        oom_kills = (cgroup.oom_kills if cgroup is not None else watchdog.kills if watchdog is not None
                     else scope_oom_kills)
        try:
            transport = ProcessTransport(command, env=scope_environment() if scope else {"PATH": os.defpath},
                                         pass_fds=() if seccomp_fd is None else (seccomp_fd,),
                                         on_kill=on_kill, oom_kills=oom_kills)
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        if watchdog is not None:
            watchdog.start(transport.process.pid)
        return transport, init
