"""The worker's loop: read the init message, warm up, then one job at a time (hand it to the waiting job
process, reply, clean up, pre-fork the next job process)."""

import contextlib
import os
import signal
import sys
import time

from .capture import Capture, ExampleOutput, Report, drain, wait_for_child
from .cleanup import clean_up, snapshot
from .configure import Config, configure
from .framing import read_frame, write_frame
from .job_process import Child
from .module_import import job_path
from .replies import build_reply, oom_kill_count
from .text import GOT_CAP
from .verdicts import Verdicts, prepare
from .warm_up import warm_up
from .zygote import Zygote, ZygoteGone


class Conversation:
    """The worker's side of one job: the job's answers handed to the verdicts, each next command sent."""

    def __init__(self, child, verdicts, report, examples):
        self.child, self.verdicts, self.report, self.examples = child, verdicts, report, examples

    def __call__(self):
        for message in self.report.messages():
            command = self.verdicts.accept(message, self.examples.take)
            if self.verdicts.tampered:
                stop(self.child.pid)
                return
            if command is not None:
                self.child.send(command)


KILLED_WAIT = 5.0


def stop(pid):
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def run_job(job, config, child, zygote):
    """Run the job in the waiting child; the reply, or None when the child was already dead."""
    started = time.monotonic()
    oom_before = oom_kill_count()
    path = job_path(job, config, child.job_dir)
    prepared, flags = prepare(job, path)
    verdicts = Verdicts(prepared, flags, path, whole_module=bool(job.get("whole_module")))
    if child.pid is None or not child.send(job):
        child.close()
        return None
    limit = int(job["output_limit"])
    stdout, stderr = Capture(child.out_r, limit), Capture(child.err_r, limit)
    report, examples = Report(child.report_r), ExampleOutput(child.example_r, GOT_CAP)
    captures = [stdout, stderr, report, examples]
    conversation = Conversation(child, verdicts, report, examples)
    status = wait_for_child(child.pid, zygote, captures, started + float(job["timeout"]), conversation)
    if status is None:
        stop(child.pid)
        zygote.wait(child.pid, KILLED_WAIT)
    drain(captures)
    conversation()
    child.close()
    reply = build_reply(job, config, status, stdout, stderr, report, verdicts)
    if reply["status"] == "killed" and oom_before is not None and oom_kill_count() != oom_before:
        reply["status"] = "memory"
        reply["detail"] = "killed by the memory limit of the whole sandbox"
    return reply


def main():
    protocol_in = sys.stdin.buffer
    protocol_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # a stray print in the worker must never corrupt the protocol
    init = read_frame(protocol_in)
    if not init or init.get("op") != "init":
        return 2
    configure(init)
    config = Config(init)
    os.makedirs(config.work_root, exist_ok=True)
    config.baseline = snapshot(config.clean_dirs)
    warm_up(config)
    zygote = Zygote(config)
    config.keep_pids = frozenset({zygote.pid})
    write_frame(protocol_out, {"op": "ready", "python": sys.version.split()[0], "pid": os.getpid(),
                               "uid": os.getuid()})
    child = Child(config, zygote)
    while True:
        message = read_frame(protocol_in)
        if message is None:
            return 0
        if message.get("op") != "job":
            write_frame(protocol_out, {"op": "error", "detail": "unknown op"})
            continue
        try:
            reply = run_job(message, config, child, zygote)
        except ZygoteGone:  # the job killed its parent: end as if it had killed the worker (replaced)
            return 3
        if reply is None:  # the waiting child had died: one more, fresh
            clean_up(config)
            child = Child(config, zygote)
            reply = run_job(message, config, child, zygote) or {
                "op": "result", "status": "crashed", "detail": "the job process died before its job"}
        write_frame(protocol_out, reply)
        # Cleaning up and forking the next child happen after the reply, off the caller's critical path;
        # the host waits for "idle" before it sends the next job.
        if not clean_up(config):
            write_frame(protocol_out, {"op": "retired", "detail": "something of the last job survived"})
            return 3
        child = Child(config, zygote)
        if child.pid is None:
            write_frame(protocol_out, {"op": "retired", "detail": "the job processes' parent is gone"})
            return 3
        write_frame(protocol_out, {"op": "idle"})
