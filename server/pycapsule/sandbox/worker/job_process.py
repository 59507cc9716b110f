"""The pre-forked job process: set up (own session, fds, limits) before its job arrives, then runs it."""

import contextlib
import fcntl
import json
import os
import select
import signal
import sys
import traceback

from .configure import FORWARDED_SIGNALS, PR_SET_PDEATHSIG, prctl
from .framing import write_all
from .limits import set_cpu_limit, set_limits
from .module_import import job_path
from .runner import COMMAND_FD, EXAMPLE_FD, REPORT_FD, Commands, run_job_in_child, send_report
from .text import clip
from .warm_up import prewarm
from .working_dir import show_project

PREWARM_AFTER = 0.005


def line_buffered_text(fd):
    return open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)


def child_main(config, job_dir, job_r, out_w, err_w, report_w, example_w):
    """Runs in the pre-forked child: prepare, wait for the job, run it, report; never returns."""
    code = 70
    try:
        worker = os.getppid()
        os.setsid()
        # The job leaves with its worker: a worker killed mid-job (the caller interrupted, or it stopped
        # answering) must not leave the job running, and setsid took it out of the worker's group.
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != worker:  # the worker died before that line
            os._exit(code)
        devnull = os.open(os.devnull, os.O_RDONLY)
        # Lift every fd we keep above the target numbers first, so no dup2 clobbers another.
        lifted = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100)
                  for fd in (devnull, out_w, err_w, report_w, job_r, example_w)]
        for target, fd in zip((0, 1, 2, REPORT_FD, COMMAND_FD, EXAMPLE_FD), lifted, strict=True):
            os.dup2(fd, target)
        os.closerange(EXAMPLE_FD + 1, 65536)  # the protocol fds and everything else the worker holds
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        for name in FORWARDED_SIGNALS:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(job_dir)
        os.environ["TMPDIR"] = job_dir
        os.environ["HOME"] = job_dir
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = line_buffered_text(1)
        sys.stderr = line_buffered_text(2)
        set_limits(config)
        # Warm up only while no job is waiting: back to back, the job is there at once and a warm-up
        # would only add CPU time; with a pause between jobs it takes the page faults off the next one.
        waiting, _, _ = select.select([COMMAND_FD], [], [], PREWARM_AFTER)
        if not waiting:
            prewarm(job_dir)
        commands = Commands(COMMAND_FD)
        job = commands()
        if job is None:  # the worker is shutting down
            os._exit(0)
        set_cpu_limit(job["timeout"])
        sys.path[:] = config.sys_path
        run_job_in_child(job, job_path(job, config, job_dir), commands, project_dir=config.project_dir)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        code = 0
    except BaseException:
        with contextlib.suppress(BaseException):
            send_report({"internal_error": clip(traceback.format_exc())})
    os._exit(code)


class Child:
    """A job process, forked by the zygote before its job arrives: its pid, the pipe it reads its job and
    then the worker's commands from, and the pipes it writes to (stdout, stderr, its answers, what its
    examples print)."""

    def __init__(self, config, zygote):
        self.job_dir = os.path.join(config.work_root, "job")
        os.makedirs(self.job_dir, mode=0o700, exist_ok=True)
        if config.project_dir:
            show_project(config.project_dir, self.job_dir)
        job_r, self.job_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.report_r, report_w = os.pipe()
        self.example_r, example_w = os.pipe()
        os.set_blocking(self.example_r, False)
        self.pid = zygote.fork(self.job_dir, [job_r, out_w, err_w, report_w, example_w])
        for fd in (job_r, out_w, err_w, report_w, example_w):
            os.close(fd)

    def send(self, message):
        """One line to the job, the job itself first, then the worker's commands (JSON; its escapes keep
        lone surrogates intact); False when the job process is gone."""
        try:
            write_all(self.job_w, json.dumps(message).encode("ascii") + b"\n")
            return True
        except OSError:
            return False

    def close(self):
        for fd in (self.job_w, self.out_r, self.err_r, self.report_r, self.example_r):
            with contextlib.suppress(OSError):
                os.close(fd)
