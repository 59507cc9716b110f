"""The parent of every job process: forked from the worker before its first job, so each job process
starts from memory that never held an earlier job's source, request, output or reply (the worker's does).
It forks one job process at a time on request, with the ends of the pipes the worker made, and says when
that process ended and how."""

import contextlib
import os
import select
import signal
import socket

from .configure import PR_SET_PDEATHSIG, prctl
from .job_process import child_main

MAX_FDS = 8


class ZygoteGone(Exception):
    """The zygote died (a job may kill its parent): no job process can be made or waited for any more."""


class Zygote:
    """The worker's handle on the zygote: fork a job process, then learn how it ended."""

    def __init__(self, config):
        self.sock, theirs = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:
            self.sock.close()
            serve(theirs, config)
        theirs.close()
        self.buffer = b""
        self.ended = {}  # job process pid -> wait status

    @property
    def fd(self):
        return self.sock.fileno()

    def fork(self, job_dir, fds):
        """A job process holding `fds`; its pid, or None when the zygote is gone."""
        try:
            socket.send_fds(self.sock, [job_dir.encode()], fds)
            while True:
                kind, pid, _ = self._line(block=True)
                if kind == "pid":
                    return pid
        except (OSError, ValueError):
            return None

    def poll(self, pid):
        """The wait status of job process `pid` once it has ended, else None (never blocks); raises
        ZygoteGone when it never can be."""
        try:
            while pid not in self.ended and self._line(block=False) is not None:
                pass
        except (OSError, ValueError) as error:
            raise ZygoteGone() from error
        return self.ended.get(pid)

    def wait(self, pid, timeout):
        """The wait status of job process `pid`, waiting up to `timeout` seconds for it; None after that."""
        with contextlib.suppress(OSError, ValueError):
            while pid not in self.ended:
                if not select.select([self.sock], [], [], timeout)[0]:
                    break
                self._line(block=False)
        return self.ended.get(pid)

    def _line(self, block):
        """One of the zygote's lines: ("pid", pid, None) or ("exit", pid, status); None when none is ready."""
        while b"\n" not in self.buffer:
            if not block and not select.select([self.sock], [], [], 0)[0]:
                return None
            data = self.sock.recv(4096)
            if not data:
                raise OSError("the zygote is gone")
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        kind, pid, *status = line.decode().split()
        if kind == "exit":
            self.ended[int(pid)] = int(status[0])
            return kind, int(pid), int(status[0])
        return kind, int(pid), None


def serve(sock, config):
    """The zygote's loop: fork a job process per request, wait for it, report; never returns."""
    try:
        worker = os.getppid()
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # it leaves with its worker
        if os.getppid() == worker:
            while True:
                message, fds, _, _ = socket.recv_fds(sock, 4096, MAX_FDS)
                if not message or len(fds) != 5:
                    break
                pid = os.fork()
                if pid == 0:
                    sock.close()
                    child_main(config, message.decode(), *fds)
                for fd in fds:
                    os.close(fd)
                sock.sendall(f"pid {pid}\n".encode())
                _, status = os.waitpid(pid, 0)
                sock.sendall(f"exit {pid} {status}\n".encode())
    except BaseException:  # the worker went away, or asked for something else: either way, end
        pass
    os._exit(0)
