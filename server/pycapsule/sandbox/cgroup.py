"""A cgroup that caps the whole bwrap sandbox (worker + job + every child) in memory and processes.

RLIMIT_AS bounds one process; without a cgroup, N processes could each take that much. Creating
cgroups needs root (or a delegated subtree), so this is best-effort: `create` returns None when the
machine does not allow it, and the sandbox then relies on the per-process limits alone.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "pycapsule-sandbox-"


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class SandboxCgroup:
    def __init__(self, directories: list[Path]):
        self.directories = directories

    def oom_kills(self) -> int | None:
        """How many processes the kernel has killed in this cgroup for want of memory."""
        for directory in self.directories:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = (directory / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip().isdigit():
                        return int(value)
        return None

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.directories]

    def remove(self) -> None:
        """Delete the cgroup once its processes are gone (they were just killed: allow a moment)."""
        for directory in self.directories:
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _create_v2(name: str, memory: int, processes: int) -> SandboxCgroup:
    enabled = (ROOT / "cgroup.subtree_control").read_text().split()
    if not {"memory", "pids"} <= set(enabled):
        _write(ROOT / "cgroup.subtree_control", "+memory +pids")
    directory = ROOT / name
    directory.mkdir()
    try:
        _write(directory / "memory.max", str(memory))
        with contextlib.suppress(OSError):
            _write(directory / "memory.swap.max", "0")
        _write(directory / "pids.max", str(processes))
    except OSError:
        directory.rmdir()
        raise
    return SandboxCgroup([directory])


def _create_v1(name: str, memory: int, processes: int) -> SandboxCgroup:
    made: list[Path] = []
    try:
        memory_dir = ROOT / "memory" / name
        memory_dir.mkdir()
        made.append(memory_dir)
        _write(memory_dir / "memory.limit_in_bytes", str(memory))
        if (memory_dir / "memory.memsw.limit_in_bytes").exists():
            _write(memory_dir / "memory.memsw.limit_in_bytes", str(memory))
        pids_dir = ROOT / "pids" / name
        pids_dir.mkdir()
        made.append(pids_dir)
        _write(pids_dir / "pids.max", str(processes))
    except OSError:
        SandboxCgroup(made).remove()
        raise
    return SandboxCgroup(made)


def sweep_orphans() -> None:
    """Remove the empty cgroups of sandboxes whose process ended without closing them."""
    for directory in [*ROOT.glob(f"{PREFIX}*"), *ROOT.glob(f"*/{PREFIX}*")]:
        parts = directory.name.split("-")
        owner = int(parts[-2]) if len(parts) >= 2 and parts[-2].isdigit() else None
        if owner is not None and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                directory.rmdir()


def create(name: str, memory: int, processes: int) -> SandboxCgroup | None:
    """A fresh cgroup with these limits, or None when this machine does not let us make one.
    `name` must start with PREFIX and end with -<pid of its owner>-<n>."""
    if os.geteuid() != 0:
        return None
    sweep_orphans()
    try:
        if (ROOT / "cgroup.controllers").exists():
            return _create_v2(name, memory, processes)
        if (ROOT / "memory").is_dir() and (ROOT / "pids").is_dir():
            return _create_v1(name, memory, processes)
    except OSError:
        return None
    return None
