"""The warm worker that runs INSIDE every sandbox backend (stdlib only: no pycapsule imports).

The host starts it once with `python3 -I -c BOOTSTRAP`, sends this file's source and then talks
to it in frames (4-byte big-endian length + JSON) over the worker's stdin/stdout:

    host -> worker   {"op": "init", ...}   then   {"op": "job", ...} per job
    worker -> host   {"op": "ready", "python": "3.11.2"}   then   {"op": "result", ...} per job

Each job runs in a fresh forked child with a fresh module object, its own session, rlimits and
/dev/null as stdin. The worker enforces the job's wall clock, keeps at most `output_limit`
bytes of stdout/stderr, and after every job kills whatever the job left running and empties the
writable directories, so nothing leaks into the next job. The host enforces the same limits
again from outside (it cannot trust a worker that shares a sandbox with hostile code).
"""

import ast
import builtins
import contextlib
import doctest
import fcntl
import gc
import json
import linecache
import os
import resource
import select
import shutil
import signal
import struct
import sys
import time
import traceback
import types

FRAME_HEADER = struct.Struct(">I")
MAX_INPUT_FRAME = 64 * 1024 * 1024
MAX_REPORT_BYTES = 16 * 1024 * 1024
TEXT_CAP = 8 * 1024
MESSAGE_CAP = 2 * 1024
FAILURES_CAP = 50
TRACEBACK_FRAMES_CAP = 20
REPORT_FD = 3
JOB_FD = 4
PREWARM_AFTER = 0.005

FORWARDED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH")
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38


# ---------------------------------------------------------------- framing

def read_frame(stream):
    header = stream.read(FRAME_HEADER.size)
    if len(header) < FRAME_HEADER.size:
        return None
    (size,) = FRAME_HEADER.unpack(header)
    if size > MAX_INPUT_FRAME:
        raise ValueError("frame too large")
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return json.loads(payload.decode("utf-8"))


def write_frame(fd, message):
    payload = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    data = FRAME_HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# ---------------------------------------------------------------- set-up

def prctl(option, value):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except Exception:
        return False


def configure(init):
    """Apply the host's init message: paths, privileges, process attributes."""
    if init.get("sys_path"):
        sys.path[:] = [p for p in init["sys_path"] if isinstance(p, str)]
    sys.path[0:0] = [p for p in init.get("sys_path_prepend", []) if isinstance(p, str)]
    sys.dont_write_bytecode = True
    uid = init.get("uid")
    if isinstance(uid, int) and os.getuid() == 0:
        # bwrap launched by root: become a dedicated uid so RLIMIT_NPROC holds and nothing is root.
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    # Non-dumpable: the job (same uid) cannot ptrace the worker or open /proc/<worker>/fd or mem.
    prctl(PR_SET_DUMPABLE, 0)
    # Orphans of a job (setsid daemons) are re-parented here, where they are killed and reaped.
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Docker's init forwards the signals a job sends to PID 1 on to the worker: ignore those.
    for name in FORWARDED_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    doctest._OutputRedirectingPdb = NoDebugger


class Config:
    def __init__(self, init):
        self.work_root = init.get("work_dir") or "/work"
        self.clean_dirs = [d for d in init.get("clean_dirs", [self.work_root]) if isinstance(d, str)]
        self.own_pid_namespace = bool(init.get("own_pid_namespace"))
        limits = init.get("limits") or {}
        self.memory = int(limits.get("memory_bytes", 1 << 30))
        self.processes = limits.get("processes")
        self.open_files = int(limits.get("open_files", 256))
        self.file_size = int(limits.get("file_size_bytes", 16 << 20))
        self.stack = int(limits.get("stack_bytes", 8 << 20))
        self.baseline = {}
        self.own_ipc_namespace = bool(init.get("own_ipc_namespace"))


# ---------------------------------------------------------------- inside the job (child)

def clip(text, cap=TEXT_CAP):
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n... ({len(text) - cap} more characters)"


def exception_info(exc, path, lines):
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if f.filename == path]
    line = user[-1].lineno if user else None
    if isinstance(exc, SyntaxError) and exc.filename == path and not user:
        line = exc.lineno
    source_line = None
    if line is not None and 1 <= line <= len(lines):
        source_line = lines[line - 1].strip()
    shown = user[-TRACEBACK_FRAMES_CAP:]
    text = "".join(traceback.format_list(shown))
    if len(user) > len(shown):
        text = f"  ... {len(user) - len(shown)} earlier frames\n" + text
    if isinstance(exc, SyntaxError):
        message = exc.msg or str(exc)
    else:
        try:
            message = str(exc)
        except BaseException:
            message = f"<unprintable {type(exc).__name__}>"
    return {
        "type": type(exc).__qualname__,
        "message": clip(message, MESSAGE_CAP),
        "line": line,
        "source_line": source_line,
        "traceback": clip(text),
    }


def send_report(message):
    data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
    view = memoryview(data)
    while view:
        view = view[os.write(REPORT_FD, view):]


class NoDebugger:
    """Stands in for doctest's per-run Pdb (slow to build, and stdin is /dev/null anyway)."""

    def __init__(self, out):
        pass

    def __getattr__(self, name):  # set_trace, reset, set_continue, ...
        return lambda *args, **kwargs: None


class RecordingRunner(doctest.DocTestRunner):
    """Collects structured failures instead of printing doctest's text report."""

    def __init__(self, path, lines, report):
        super().__init__(verbose=False, optionflags=0)
        self.report = report
        self.path = path
        self.lines = lines
        self.recorded = []
        self.saw_memory_error = False

    def example_line(self, test, example):
        return test.lineno + example.lineno + 1

    def report_start(self, out, test, example):
        self.report({"progress": {"qualname": test.name, "line": self.example_line(test, example),
                                  "source": clip(example.source.rstrip("\n"), 200)}})

    def report_success(self, out, test, example, got):
        pass

    def record(self, test, example, got, exception=None):
        if len(self.recorded) < FAILURES_CAP:
            self.recorded.append({
                "qualname": test.name,
                "source": clip(example.source.rstrip("\n")),
                "line": self.example_line(test, example),
                "expected": clip(example.want),
                "got": clip(got),
                "exception": exception,
            })

    def report_failure(self, out, test, example, got):
        self.record(test, example, got)

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = exc_info[1]
        if isinstance(exc, MemoryError):
            self.saw_memory_error = True
        self.record(test, example, "", exception_info(exc, self.path, self.lines))


def docstring_index(tree, every):
    """qualname -> node for functions and classes; nested functions only when asked by name."""
    found = {}

    def visit(body, prefix, inside_function):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + node.name
                if not (every and inside_function):
                    found.setdefault(qualname, node)
                is_function = not isinstance(node, ast.ClassDef)
                visit(node.body, qualname + ".", inside_function or is_function)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []) or [], prefix, inside_function)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix, inside_function)

    visit(tree.body, "", False)
    return found


def docstring_node(node):
    if node.body and isinstance(node.body[0], ast.Expr):
        value = node.body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value
    return None


def run_doctests(targets, tree, module, path, lines, report):
    index = docstring_index(tree, every=targets is None)
    names = list(index) if targets is None else list(targets)
    parser = doctest.DocTestParser()
    reports = []

    def add(function_report):
        # Streamed as each function finishes: a later one that hangs or crashes loses only itself.
        reports.append(function_report)
        report({"function": function_report})

    saw_memory_error = False
    for qualname in names:
        node = index.get(qualname)
        if node is None:
            add({"qualname": qualname, "attempted": 0, "failed": 0, "failures": [],
                            "parse_error": f"no function or class named {qualname!r} in the module"})
            continue
        docstring = docstring_node(node)
        if docstring is None:
            if targets is not None:
                add({"qualname": qualname, "attempted": 0, "failed": 0, "failures": []})
            continue
        try:
            test = parser.get_doctest(docstring.value, dict(module.__dict__), qualname, path,
                                      docstring.lineno - 1)
        except ValueError as exc:
            add({"qualname": qualname, "attempted": 0, "failed": 0, "failures": [],
                            "parse_error": (
                                f"the docstring of {qualname} (line {docstring.lineno}) is not valid "
                                f"doctest: {clip(str(exc), MESSAGE_CAP)}")})
            continue
        if not test.examples and targets is None:
            continue
        runner = RecordingRunner(path, lines, report)
        outcome = runner.run(test, out=lambda text: None, clear_globs=True)
        saw_memory_error = saw_memory_error or runner.saw_memory_error
        add({"qualname": qualname, "attempted": outcome.attempted, "failed": outcome.failed,
                        "failures": runner.recorded})
    return reports, saw_memory_error


def run_job_in_child(job, path, report=send_report):
    source = job["source"]
    lines = source.splitlines()
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(source)
    linecache.clearcache()
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return {"module_error": exception_info(exc, path, lines), "functions": []}
    module = types.ModuleType(job["module_name"])
    module.__file__ = path
    module.__builtins__ = builtins
    sys.modules[job["module_name"]] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        return {"module_error": exception_info(exc, path, lines), "functions": [],
                "memory": isinstance(exc, MemoryError)}
    targets = job.get("doctest_targets")
    functions, memory = run_doctests(None if targets is None else tuple(targets),
                                     ast.parse(source, path), module, path, lines, report)
    return {"module_error": None, "functions": functions, "memory": memory}


def limit(kind, value):
    try:
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        pass


def set_limits(config):
    limit(resource.RLIMIT_AS, config.memory)
    limit(resource.RLIMIT_FSIZE, config.file_size)
    limit(resource.RLIMIT_NOFILE, config.open_files)
    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_STACK, config.stack)
    if config.processes:
        limit(resource.RLIMIT_NPROC, int(config.processes))


def set_cpu_limit(timeout):
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit(resource.RLIMIT_CPU, int(used.ru_utime + used.ru_stime + timeout) + 2)


def line_buffered_text(fd):
    return open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)


def prewarm(job_dir):
    """Run a throw-away job so this fresh fork copies the pages a job touches before the real job
    arrives (off the critical path), then forget it."""
    main_module = sys.modules.get("__main__")
    path = os.path.join(job_dir, "warm_up.py")
    try:
        run_job_in_child({"source": WARM_UP_SOURCE, "module_name": "__main__", "doctest_targets": None},
                         path, report=lambda message: None)
    finally:
        sys.modules["__main__"] = main_module
        linecache.clearcache()
        with contextlib.suppress(OSError):
            os.unlink(path)


def read_job(fd):
    chunks = []
    while True:
        data = os.read(fd, 1 << 20)
        if not data:
            break
        chunks.append(data)
    return json.loads(b"".join(chunks).decode("utf-8")) if chunks else None


def child_main(config, job_dir, job_r, out_w, err_w, report_w):
    """Runs in the pre-forked child: prepare, wait for the job, run it, report; never returns."""
    code = 70
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        # Lift every fd we keep above the target numbers first, so no dup2 clobbers another.
        lifted = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (devnull, out_w, err_w, report_w, job_r)]
        for target, fd in zip((0, 1, 2, REPORT_FD, JOB_FD), lifted, strict=True):
            os.dup2(fd, target)
        os.closerange(JOB_FD + 1, 65536)  # the protocol fds and everything else the worker holds
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
        waiting, _, _ = select.select([JOB_FD], [], [], PREWARM_AFTER)
        if not waiting:
            prewarm(job_dir)
        job = read_job(JOB_FD)
        if job is None:  # the worker is shutting down
            os._exit(0)
        os.close(JOB_FD)
        set_cpu_limit(job["timeout"])
        name = os.path.basename(job.get("filename") or "capsule.py") or "capsule.py"
        result = run_job_in_child(job, os.path.join(job_dir, name))
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        send_report({"result": result})
        code = 0
    except BaseException:
        with contextlib.suppress(BaseException):
            send_report({"internal_error": clip(traceback.format_exc())})
    os._exit(code)


# ---------------------------------------------------------------- the worker (parent)

def list_pids():
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            pids.append(int(entry))
    return pids


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None, None
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[0].decode(), int(fields[1])


def direct_children():
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return None


def stray_pids(own_pid_namespace):
    # As a child subreaper the worker inherits every orphan of the job, so its direct children are
    # all that is left (grandchildren come up as their parents die). /proc scans are the fallback.
    children = direct_children()
    if children is not None:
        return children
    me = os.getpid()
    if own_pid_namespace:
        return [p for p in list_pids() if p not in (1, me)]
    by_parent = {}
    for pid in list_pids():
        _, ppid = parent_of(pid)
        if ppid is not None:
            by_parent.setdefault(ppid, []).append(pid)
    found, todo = [], [me]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_strays(config):
    """Kill everything the job left behind; True when none are left."""
    for attempt in range(200):
        alive = []
        for pid in stray_pids(config.own_pid_namespace):
            state, _ = parent_of(pid)
            if state in (None, "Z", "X"):
                continue
            alive.append(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()
        if not alive:
            return True
        time.sleep(min(0.001 * (attempt + 1), 0.02))
    return False


def snapshot(directories):
    """Every path below the writable directories as the sandbox started (bind-mount parents live here),
    with its permission bits, so a job that changed them can be undone."""
    found = {}
    for top in directories:
        with contextlib.suppress(OSError):
            found[top] = os.lstat(top).st_mode
        for root, dirs, files in os.walk(top):
            # Mount points (the project's read-only bind, e.g. under /tmp) are part of the starting
            # state: record them, but do not descend into them.
            for name in dirs + files:
                path = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    found[path] = os.lstat(path).st_mode
            dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(root, d))]
    return found


def remove(target):
    """Delete a file or a whole tree, also one whose directories the job made unreadable."""
    try:
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, 0o700)  # first: an unreadable top cannot even be listed
            for root, dirs, _ in os.walk(target):
                for name in dirs:
                    with contextlib.suppress(OSError):
                        os.chmod(os.path.join(root, name), 0o700)
            shutil.rmtree(target)
        else:
            os.unlink(target)
    except OSError:
        pass
    return not os.path.lexists(target)


def restore_mode(path, baseline):
    """Put back the permission bits a job changed on a directory that was there from the start."""
    mode = baseline.get(path) if isinstance(baseline, dict) else None
    if mode is None:
        return True
    try:
        if os.lstat(path).st_mode != mode:
            os.chmod(path, mode & 0o7777)
        return True
    except OSError:
        return False


def restore_directories(directories, baseline):
    """Delete whatever the job added below the writable directories and undo permission changes;
    True when all of it is gone. Only directories that were there at the start are searched: anything
    new goes as a whole."""
    clean = True
    todo = list(directories)
    while todo:
        directory = todo.pop()
        clean = restore_mode(directory, baseline) and clean
        try:
            entries = list(os.scandir(directory))
        except OSError:
            clean = not os.path.exists(directory) and clean
            continue
        for entry in entries:
            if entry.path not in baseline:
                clean = (not os.path.ismount(entry.path) and remove(entry.path)) and clean
            elif entry.is_dir(follow_symlinks=False) and not os.path.ismount(entry.path):
                todo.append(entry.path)
            elif not os.path.ismount(entry.path):
                clean = restore_mode(entry.path, baseline) and clean
    return clean


SYSV_IPC = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
IPC_RMID = 0


def remove_ipc_objects():
    """Delete every SysV shared-memory segment, message queue and semaphore set of this IPC
    namespace (a private one: only the sandbox's jobs made them); True when none is left.
    POSIX shared memory and message queues are files in /dev/shm and /dev/mqueue (clean dirs)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception:
        return False
    clean = True
    for kind, call in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 2 or not fields[1].isdigit():
                continue
            ident = int(fields[1])
            function = getattr(libc, call)
            result = function(ident, 0, IPC_RMID, None) if kind == "sem" else function(ident, IPC_RMID, None)
            clean = result == 0 and clean
    return clean


class Capture:
    """One of the job's output pipes, keeping at most `limit` bytes."""

    def __init__(self, fd, limit):
        self.fd = fd
        self.limit = limit
        self.chunks = []
        self.kept = 0
        self.dropped = 0
        self.open = True

    def read(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.open = False
            return False
        room = self.limit - self.kept
        if room > 0:
            self.chunks.append(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))
        return True

    def text(self):
        return b"".join(self.chunks).decode("utf-8", "replace")


class Report(Capture):
    def __init__(self, fd):
        super().__init__(fd, MAX_REPORT_BYTES)

    def messages(self):
        """(result, last progress, internal error, functions finished so far)."""
        result, progress, internal, functions = None, None, None, []
        for line in b"".join(self.chunks).split(b"\n"):
            if not line:
                continue
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError:
                return None, progress, "the job's report was unreadable", functions
            if not isinstance(message, dict):
                return None, progress, "the job's report was unreadable", functions
            if "progress" in message:
                progress = message["progress"]
            elif "function" in message:
                functions.append(message["function"])
            elif "result" in message and result is None:
                result = message["result"]
            elif "internal_error" in message:
                internal = message["internal_error"]
        return result, progress, internal, functions


def describe_progress(progress):
    if not isinstance(progress, dict):
        return ""
    return " while running example `{}` (line {})".format(progress.get("source"), progress.get("line"))


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def wait_for_child(pid, captures, deadline):
    """Pump the job's pipes until it exits or the deadline passes. Returns (wait status | None)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return 0
            if done:
                return status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            watched = [c.fd for c in captures if c.open]
            if pidfd is not None:
                watched.append(pidfd)
            wait = remaining if pidfd is not None else min(remaining, 0.01)
            ready, _, _ = select.select(watched, [], [], wait)
            for capture in captures:
                if capture.open and capture.fd in ready:
                    capture.read()
    finally:
        if pidfd is not None:
            os.close(pidfd)


def drain(captures, seconds=0.05):
    """Read what is already buffered without waiting for EOF (strays may hold the pipes open)."""
    stop = time.monotonic() + seconds
    for capture in captures:
        os.set_blocking(capture.fd, False)
        while capture.open and time.monotonic() < stop and capture.read():
            pass


class Child:
    """A pre-forked job process: its pid, the pipe it reads its job from, and its output pipes."""

    def __init__(self, config):
        self.job_dir = os.path.join(config.work_root, "job")
        os.makedirs(self.job_dir, mode=0o700, exist_ok=True)
        job_r, self.job_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.report_r, report_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            child_main(config, self.job_dir, job_r, out_w, err_w, report_w)
        for fd in (job_r, out_w, err_w, report_w):
            os.close(fd)

    def start(self, job):
        """Hand the job over; False when the child died while it waited."""
        try:
            data = json.dumps(job).encode("ascii")  # escapes keep lone surrogates intact
            view = memoryview(data)
            while view:
                view = view[os.write(self.job_w, view):]
            return True
        except OSError:
            return False
        finally:
            os.close(self.job_w)

    def close(self):
        for fd in (self.out_r, self.err_r, self.report_r):
            with contextlib.suppress(OSError):
                os.close(fd)


def run_job(job, config, child):
    """Run the job in the waiting child; the reply, or None when the child was already dead."""
    started = time.monotonic()
    oom_before = oom_kill_count()
    if not child.start(job):
        child.close()
        return None
    limit = int(job["output_limit"])
    stdout, stderr, report = Capture(child.out_r, limit), Capture(child.err_r, limit), Report(child.report_r)
    captures = [stdout, stderr, report]
    status = wait_for_child(child.pid, captures, started + float(job["timeout"]))
    timed_out = status is None
    if timed_out:
        with contextlib.suppress(OSError):
            os.killpg(child.pid, signal.SIGKILL)
        try:
            os.kill(child.pid, signal.SIGKILL)
            os.waitpid(child.pid, 0)
        except OSError:
            pass
    drain(captures)
    child.close()
    reply = build_reply(job, config, status, stdout, stderr, report)
    if reply["status"] == "killed" and oom_before is not None and oom_kill_count() != oom_before:
        reply["status"] = "memory"
        reply["detail"] = "killed by the memory limit of the whole sandbox"
    return reply


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


def build_reply(job, config, status, stdout, stderr, report):
    result, progress, internal, finished = report.messages()
    reply = {
        "op": "result",
        "stdout": stdout.text(),
        "stderr": stderr.text(),
        "truncated": bool(stdout.dropped or stderr.dropped),
        "functions": finished,  # what completed before a timeout or crash; replaced by the full result
        "module_error": None,
        "detail": "",
    }
    if status is None:
        reply["status"] = "timeout"
        reply["detail"] = (
            f"killed after {job['timeout']} s wall-clock limit{describe_progress(progress)}"
        )
    elif result is not None and isinstance(result, dict):
        reply["functions"] = result.get("functions") or []
        reply["module_error"] = result.get("module_error")
        memory = bool(result.get("memory"))
        if memory:
            reply["status"] = "memory"
            reply["detail"] = f"the job ran out of memory (limit {config.memory >> 20} MiB)"
        elif reply["module_error"]:
            reply["status"] = "error"
            error = reply["module_error"]
            reply["detail"] = "the module raised {} at import".format(error.get("type"))
        else:
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


def clean_up(config):
    """After a job: nothing of it may survive. True when that holds."""
    clean = kill_strays(config)
    if config.own_ipc_namespace:
        clean = remove_ipc_objects() and clean
    return restore_directories(config.clean_dirs, config.baseline) and clean


WARM_UP_SOURCE = '''
def warm_up(x):
    """
    >>> warm_up(1)
    1
    >>> warm_up(0) / 0
    0
    """
    return x
'''


def warm_up(config):
    """Run one job in-process so lazy imports and caches are paid once, then freeze the heap so forked
    children share it instead of copying it."""
    job_dir = os.path.join(config.work_root, "warm-up")
    os.makedirs(job_dir, exist_ok=True)
    prewarm(job_dir)
    remove(job_dir)
    gc.collect()
    gc.freeze()


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
    write_frame(protocol_out, {"op": "ready", "python": sys.version.split()[0], "pid": os.getpid(),
                               "uid": os.getuid()})
    child = Child(config)
    while True:
        message = read_frame(protocol_in)
        if message is None:
            return 0
        if message.get("op") != "job":
            write_frame(protocol_out, {"op": "error", "detail": "unknown op"})
            continue
        reply = run_job(message, config, child)
        if reply is None:  # the waiting child had died: one more, fresh
            clean_up(config)
            child = Child(config)
            reply = run_job(message, config, child) or {
                "op": "result", "status": "crashed", "detail": "the job process died before its job"}
        write_frame(protocol_out, reply)
        # Cleaning up and forking the next child happen after the reply, off the caller's critical path;
        # the host waits for "idle" before it sends the next job.
        if not clean_up(config):
            write_frame(protocol_out, {"op": "retired", "detail": "something of the last job survived"})
            return 3
        child = Child(config)
        write_frame(protocol_out, {"op": "idle"})


if __name__ == "__main__":
    sys.exit(main())
