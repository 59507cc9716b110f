"""The shared model servers a test started: found by their runtime folder, stopped at the test's end."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

from pycapsule.embedded_model.shared import stop


def model_servers(folder: Path) -> list[int]:
    """Pids of the running shared model servers whose runtime folder is `folder` (what `ps` shows)."""
    wanted = ["--shared", str(folder)]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        except (OSError, IndexError):
            continue
        joined = list(itertools.pairwise(argv))
        if state != "Z" and "pycapsule.embedded_model.daemon" in argv and tuple(wanted) in joined:
            found.append(int(entry.name))
    return sorted(found)


def holding_a_model(pids: list[int]) -> list[int]:
    """Those of `pids` that have a GGUF file mapped: the processes that loaded a model (not the short-lived
    parent a server forks away from)."""
    found = []
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        if ".gguf" in maps:
            found.append(pid)
    return found


def stop_model_servers(folder: Path) -> list[int]:
    """Stop every shared model server of `folder` (recorded or not); returns the pids that were running."""
    running = model_servers(folder)
    if folder.is_dir():
        with contextlib.suppress(Exception):
            stop(folder)
    for pid in model_servers(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while model_servers(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running
