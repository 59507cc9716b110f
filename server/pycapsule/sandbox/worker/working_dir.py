"""The job's working directory: a folder of its own, which it may write, where the project's top-level
files and folders also appear (as links to their read-only selves). A doctest reading 'data/n.txt' finds
it, as under pytest run from the project root; what a job writes at the top stays in its own folder."""

import contextlib
import os

MAX_LINKS = 1000


def show_project(project_dir, job_dir):
    """Link the project's top-level entries into the job's folder (at most MAX_LINKS of them)."""
    try:
        names = sorted(os.listdir(project_dir))[:MAX_LINKS]
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            os.symlink(os.path.join(project_dir, name), os.path.join(job_dir, name))


def write_scratch(path, text):
    """Write a file of the job's own; a project link of the same name goes first, so nothing is written
    through it (into the project, or onto a read-only file system)."""
    if os.path.islink(path):
        os.unlink(path)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
