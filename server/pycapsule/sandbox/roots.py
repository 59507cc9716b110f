"""Which folders a sandbox may show as a project: never a shared one.

A project root is bound into the sandbox whole (read-only), and what the job prints goes back to the
model and possibly a remote endpoint. So a folder that holds other people's or other projects' files
($HOME with its keys, /tmp with its sockets, /) is never a root, whoever asks for it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/var", "/home", "/root", "/usr", "/opt",
                  "/srv", "/mnt", "/media", "/etc", "/proc", "/sys", "/dev")


def shared_folder(folder: Path) -> bool:
    """A folder other people's or other projects' files live in, which no sandbox may show whole:
    /, $HOME and the folder holding homes, the temporary folders, and the system's top folders."""
    folder = folder.resolve()
    home = Path.home().resolve()
    shared = {Path("/"), home, home.parent, Path(tempfile.gettempdir()).resolve(), *map(Path, SHARED_FOLDERS)}
    if folder in shared:
        return True
    try:
        return bool(folder.stat().st_mode & 0o002)  # writable by everyone, like /tmp
    except OSError:
        return False
