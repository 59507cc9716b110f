"""The reply for one job: its status and detail from how the job process ended and what it reported."""

import os
import signal


def describe_progress(progress):
    if not isinstance(progress, dict):
        return ""
    where = "line {}".format(progress.get("line"))
    if progress.get("document"):
        where = "{}:{}".format(progress.get("document"), progress.get("line"))
    return " while running example `{}` ({})".format(progress.get("source"), where)


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def oom_kill_count():
    """The kernel's count of out-of-memory kills in this container's cgroup, where it is visible
    (Docker mounts the container's own cgroup at /sys/fs/cgroup; bwrap shows no /sys)."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def build_reply(job, config, status, stdout, stderr, report, verdicts):
    internal = report.internal
    reply = {
        "op": "result",
        "stdout": stdout.text(),
        "stderr": stderr.text(),
        "truncated": bool(stdout.dropped or stderr.dropped),
        "functions": verdicts.finished_functions(),  # all of them, or those finished before the job stopped
        "module_error": verdicts.module_error,
        "lines_run": verdicts.lines_run,
        "detail": "",
    }
    progress = verdicts.progress()
    if verdicts.tampered:
        reply["status"] = "killed"
        reply["detail"] = verdicts.tampered
    elif status is None:
        reply["status"] = "timeout"
        reply["detail"] = (
            f"killed after {job['timeout']} s wall-clock limit{describe_progress(progress)}"
        )
    elif verdicts.done and verdicts.memory:
        reply["status"] = "memory"
        reply["detail"] = f"the job ran out of memory (limit {config.memory >> 20} MiB)"
    elif verdicts.done and verdicts.module_error:
        reply["status"] = "error"
        reply["detail"] = "the module raised {} at import".format(verdicts.module_error.get("type"))
    elif verdicts.done and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        reply["status"] = "ok"
    elif os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        reply["status"] = "timeout" if number == signal.SIGXCPU else "killed"
        reply["detail"] = (
            "killed by the CPU-time limit" if number == signal.SIGXCPU
            else f"killed by {signal_name(number)}{describe_progress(progress)}"
        )
        if number == signal.SIGKILL:
            reply["detail"] += " (the memory limit or a kill from inside the job)"
    else:
        code = os.WEXITSTATUS(status)
        reply["status"] = "killed"
        if internal and code == 70:
            reply["detail"] = f"the job broke its own runner: {internal.strip().splitlines()[-1]}"
        else:
            reply["detail"] = (
                f"the job exited with status {code} before reporting (os._exit?){describe_progress(progress)}"
            )
    return reply
