"""The user's private runtime folder, where the shared model server is found: its lock, state and log.

`$XDG_RUNTIME_DIR/pycapsule` when that variable names a folder of this user's, else `/tmp/pycapsule-<uid>`
(`$PYCAPSULE_RUNTIME_DIR` replaces both, for tests). Created with mode 0700; an existing one that is not
a folder of this user's closed to everyone else is refused, never used or "repaired": another user could
then read where the server listens or put a state file of theirs there.

Per model (its alias): `<alias>.lock` (an exclusive `flock` held while finding or starting the server),
`<alias>.json` (the state: pid, address, model file, threads; written atomically by the process that
started the server), `<alias>.live` (written by the server: open connections, idle since, why it stops),
`<alias>.log` (the server's stderr) and the server's own llama.cpp socket `m-<pid>.sock`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import MISSING, asdict, dataclass
from pathlib import Path
from typing import Any

from pycapsule.embedded_model.errors import ModelServerError

RUNTIME_DIR_ENV = "PYCAPSULE_RUNTIME_DIR"
_SOCKET_PATH_MAX = 107  # sun_path is 108 bytes with its terminating NUL


def runtime_dir(environ: dict[str, str] | None = None, *, create: bool = True) -> Path:
    """The user's runtime folder, created (mode 0700) if missing; a ModelServerError if it is unsafe."""
    environ = dict(os.environ) if environ is None else environ
    uid = os.getuid()
    folder = chosen_folder(environ, uid)
    if create:
        try:
            folder.mkdir(mode=0o700, parents=bool(environ.get(RUNTIME_DIR_ENV)))
        except FileExistsError:
            pass
        except OSError as error:
            raise ModelServerError(f"cannot create the runtime folder {folder}: {error.strerror}.") from None
    problem = folder_problem(folder, uid)
    if problem:
        raise ModelServerError(problem)
    return folder


def chosen_folder(environ: dict[str, str], uid: int | None = None) -> Path:
    """Where the runtime folder is (whether or not it exists)."""
    uid = os.getuid() if uid is None else uid
    if environ.get(RUNTIME_DIR_ENV, "").strip():
        return Path(environ[RUNTIME_DIR_ENV].strip())
    xdg = environ.get("XDG_RUNTIME_DIR", "").strip()
    if xdg and os.path.isabs(xdg):
        try:
            info = os.stat(xdg)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
            return Path(xdg) / "pycapsule"
    return Path("/tmp") / f"pycapsule-{uid}"


def folder_problem(folder: Path, uid: int | None = None) -> str | None:
    """Why `folder` may not hold the model server's state (None: it may): one sentence."""
    uid = os.getuid() if uid is None else uid
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return f"the runtime folder {folder} does not exist."
    except OSError as error:
        return f"the runtime folder {folder} cannot be read: {error.strerror}."
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"the runtime folder {folder} is not a folder (a link or a file); remove it."
    if info.st_uid != uid:
        return (f"the runtime folder {folder} belongs to another user (uid {info.st_uid}); "
                f"pycapsule will not use it (set ${RUNTIME_DIR_ENV} to a folder of yours).")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (f"the runtime folder {folder} is open to other users (mode {mode:04o}); "
                f"pycapsule will not use it: `chmod 700 {folder}` or remove it.")
    return None


def socket_path(folder: Path, pid: int) -> Path:
    path = folder / f"m-{pid}.sock"
    if len(os.fsencode(path)) > _SOCKET_PATH_MAX:
        raise ModelServerError(f"the runtime folder {folder} has too long a path for a socket; "
                               f"set ${RUNTIME_DIR_ENV} to a shorter one.")
    return path


@contextlib.contextmanager
def exclusive(lock: Path, on_wait: Callable[[], None] | None = None,
              timeout: float | None = None) -> Iterator[bool]:
    """Hold an exclusive flock on `lock` (created 0600). `on_wait` is called once if another process holds
    it. With `timeout`, yields False instead of waiting longer (the caller then goes on unlocked)."""
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        held = _try_lock(descriptor)
        if not held and on_wait is not None:
            on_wait()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not held:
            if deadline is None:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                held = True
            elif time.monotonic() >= deadline:
                break
            else:
                time.sleep(0.05)
                held = _try_lock(descriptor)
        yield held
    finally:
        os.close(descriptor)  # releases the lock


def _try_lock(descriptor: int) -> bool:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    return True


@dataclass(frozen=True)
class ServerState:
    """What `<alias>.json` records of a running shared server."""

    pid: int
    start_ticks: int | None
    """The process's start time (/proc/<pid>/stat): a pid reused by another process does not match."""
    base_url: str
    alias: str
    model_path: str
    model_size: int
    model_mtime_ns: int
    threads: int
    idle_timeout: float
    started: float
    """Unix time the server became ready."""
    gpu_layers_asked: int = 0
    """The `model_gpu_layers` setting it was started with."""
    gpu_layers: int = 0
    """Layers it offloads to a GPU (0 where the runtime reports no GPU device)."""
    gpu_device: str = ""
    """The runtime's GPU device ("": none)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> ServerState | None:
        """The state, or None for a file that is not one; fields with a default may be missing (a server
        started by an older pycapsule, still running)."""
        try:
            values = json.loads(text)
            fields = cls.__dataclass_fields__
            return cls(**{name: values[name] for name in fields
                          if name in values or fields[name].default is MISSING})
        except (ValueError, TypeError, KeyError):
            return None


def state_file(folder: Path, alias: str) -> Path:
    return folder / f"{alias}.json"


def lock_file(folder: Path, alias: str) -> Path:
    return folder / f"{alias}.lock"


def live_file(folder: Path, alias: str) -> Path:
    return folder / f"{alias}.live"


def log_file(folder: Path, alias: str) -> Path:
    return folder / f"{alias}.log"


def read_state(folder: Path, alias: str) -> ServerState | None:
    try:
        return ServerState.from_json(state_file(folder, alias).read_text(encoding="utf-8"))
    except OSError:
        return None


def states(folder: Path) -> list[ServerState]:
    """Every state file in `folder`, by alias."""
    found = []
    for path in sorted(folder.glob("*.json")):
        state = read_state(folder, path.stem)
        if state is not None:
            found.append(state)
    return found


def write_atomically(path: Path, text: str) -> None:
    """`text` replaces `path` at once (a reader sees the old file or the new one, never a part)."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None if it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def process_alive(pid: int, ticks: int | None) -> bool:
    """The process `pid` that started at `ticks` still runs (not a zombie, not a reused pid)."""
    if Path("/proc/self/stat").exists():
        current = start_ticks(pid)
        return current is not None and (ticks is None or current == ticks)
    try:  # no /proc: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
