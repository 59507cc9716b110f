"""`pycapsule sandbox doctor`: what it prints."""

from __future__ import annotations

import os
import subprocess
import sys


def sandbox_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", "sandbox", *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))


def test_doctor_says_which_backends_work_and_why_not() -> None:
    done = sandbox_command("doctor")
    assert done.returncode == 0
    lines = {line[:18].strip(): line for line in done.stdout.splitlines()}
    assert lines["bwrap"].endswith("works here")
    assert set(lines) == {"bwrap", "docker", "unsafe-subprocess", "bwrap limits", "python"}
    assert lines["python"][18:].strip().startswith(("/", "the Python running pycapsule")), lines["python"]


def test_doctor_says_which_whole_sandbox_limit_is_in_force() -> None:
    done = sandbox_command("doctor")
    [line] = [line for line in done.stdout.splitlines() if line.startswith("bwrap limits")]
    kind = line[18:].split(":")[0].strip()
    # root gets a cgroup of its own where cgroups can be made; an ordinary user without a systemd
    # session, the watchdog (the bwrap-user tests run the hostile suite under it)
    expected = "cgroup" if os.geteuid() == 0 and os.access("/sys/fs/cgroup", os.W_OK) else None
    assert kind in ("cgroup", "user-scope", "watchdog") and (expected is None or kind == expected), line
