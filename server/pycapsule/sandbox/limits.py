"""The resource limits every backend applies to a job (the same numbers inside and outside)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 768 * 1024 * 1024
    """Address space per process (RLIMIT_AS: a clean MemoryError); Docker also caps the container."""
    sandbox_memory_bytes: int = 1024 * 1024 * 1024
    """Memory of the whole sandbox, worker and every job process together (a cgroup: Docker's memory
    limit, or one bwrap gets when run as root); the kernel kills inside it when it is full."""
    processes: int = 32
    """Processes the job may have at once (RLIMIT_NPROC for the sandbox's own uid; pids limit in Docker)."""
    open_files: int = 256
    stack_bytes: int = 8 * 1024 * 1024
    """Main-thread stack (RLIMIT_STACK): a runaway C recursion dies fast by SIGSEGV."""
    file_size_bytes: int = 16 * 1024 * 1024
    """Largest file the job may write (RLIMIT_FSIZE)."""
    scratch_bytes: int = 64 * 1024 * 1024
    """Size of each private tmpfs (the work dir and /tmp)."""

    def to_wire(self) -> dict[str, int]:
        return asdict(self)


DEFAULT_LIMITS = Limits()
