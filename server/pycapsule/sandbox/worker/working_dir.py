"""The job's working directory: a folder of its own, which it may write, where the project's top-level
entries also appear, as pytest started from the project root would see them: its small files as copies the
job may change (a doctest that writes `test.csv` and reads it back passes, also where an earlier run left
one in the project), its folders and bigger files as links to their read-only selves. A doctest reading
'data/n.txt' finds it; what a job writes stays in the sandbox."""

import contextlib
import itertools
import os
import shutil

MAX_ENTRIES = 1000
COPY_MAX_BYTES = 256 << 10
"""A top-level file up to this size is copied; a bigger one is linked (read-only)."""
COPY_BUDGET_BYTES = 4 << 20
"""At most this much is copied per job (the job's folder is a small tmpfs)."""


def show_project(project_dir, job_dir):
    """Copy or link the project's top-level entries into the job's folder (at most MAX_ENTRIES)."""
    try:
        with os.scandir(project_dir) as found:  # read no more than that: a huge folder costs every job
            entries = sorted(itertools.islice(found, MAX_ENTRIES), key=lambda entry: entry.name)
    except OSError:
        return
    budget = COPY_BUDGET_BYTES
    for entry in entries:
        target = os.path.join(job_dir, entry.name)
        try:
            size = entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else None
            if size is not None and size <= min(COPY_MAX_BYTES, budget):
                shutil.copy(entry.path, target)
                budget -= size
                continue
        except OSError:  # unreadable to the sandbox: the link says so when the job opens it
            with contextlib.suppress(OSError):
                os.unlink(target)
        with contextlib.suppress(OSError):
            os.symlink(entry.path, target)


def write_scratch(path, text):
    """Write a file of the job's own; a project link of the same name goes first, so nothing is written
    through it (into the project, or onto a read-only file system)."""
    if os.path.islink(path):
        os.unlink(path)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
