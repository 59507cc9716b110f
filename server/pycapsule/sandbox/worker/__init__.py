"""The warm worker that runs INSIDE every sandbox backend (stdlib only: no pycapsule imports, no imports
outside this package but the standard library's).

The host starts it once with `python3 -I -c BOOTSTRAP` and sends bootstrap.py with the sources of this
package over stdin (the sandbox holds no copy of pycapsule; protocol.py builds that payload). bootstrap.py
makes the package importable from those sources and runs main.py, which then talks to the host in frames
(4-byte big-endian length + JSON) over the worker's stdin/stdout:

    host -> worker   {"op": "init", ...}   then   {"op": "job", ...} per job
    worker -> host   {"op": "ready", "python": "3.11.2"}   then   {"op": "result", ...} per job

Each job runs in a fresh child with a fresh module object, its own session, rlimits and /dev/null as
stdin, forked by the zygote: a process the worker forks before its first job, so no job process starts
with memory that held an earlier job (the worker's does). The worker enforces the job's wall clock,
keeps at most `output_limit` bytes of stdout/stderr, and after every job kills whatever the job left
running and empties the writable directories, so nothing leaks into the next job. The host enforces
the same limits again from outside (it cannot trust a worker that shares a sandbox with hostile code).

One module per job:

    bootstrap.py      the first code the sandbox runs: the package importable from the sent sources
    main.py           the loop: init, warm-up, then per job: run it, reply, clean up, pre-fork the next
    framing.py        protocol frames on the worker's side
    configure.py      the init message applied (paths, uid, prctl, signals)
    limits.py         the job process's rlimits
    zygote.py         the job processes' parent, forked before the first job: forks one, says how it ended
    job_process.py    the pre-forked job process: its fds, session and limits, then its job
    module_import.py  the job's module imported from the job's source under its real name and path
    conftests.py      the project's conftest.py files imported, their `doctest_namespace` fixtures run
    runner.py         inside the job: run what the worker asks, one example at a time, answer with its token
    verdicts.py       in the worker: parse the docstrings, drive the job, judge every example
    capture.py        the job's output pipes, pumped and capped
    replies.py        the reply's status and detail from how the job ended
    cleanup.py        after a job: kill strays, restore the writable directories, remove IPC objects
    warm_up.py        throw-away jobs that pay for imports and page faults ahead of real jobs
    text.py           caps on reported text
"""
