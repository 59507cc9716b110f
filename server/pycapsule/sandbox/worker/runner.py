"""The doctest runner inside the job's process: imports the module, then runs what the worker asks, one
command at a time (COMMAND_FD), answering each on REPORT_FD with the command's token. What an example
prints goes straight into the worker's pipe (EXAMPLE_FD); this process only says how the example ended
(what it raised). It never judges: verdicts.py does, in the worker, where the job's code cannot reach."""

import doctest
import errno
import inspect
import io
import json
import linecache
import os
import socket
import sys
import traceback
import types

from .conftests import ConftestFailed, doctest_namespace, load_conftests
from .framing import write_all
from .module_import import import_job_module
from .text import GOT_CAP, MESSAGE_CAP, clip
from .working_dir import write_scratch

TRACEBACK_FRAMES_CAP = 20
REPORT_FD = 3
COMMAND_FD = 4
EXAMPLE_FD = 5
# Bound before any job runs: a job that replaces these names later does not reach the runner's own.
ORIGINAL_DISPLAYHOOK = sys.__displayhook__
_encode = json.JSONEncoder(ensure_ascii=False).encode
CHAIN_CAP = 16
# A host that does not resolve, or a network that is not there: what a sandbox without a network answers.
NETWORK_ERRNOS = {errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH, errno.EHOSTDOWN}
# A path that is not there ("file"), on a read-only file system (the sandbox's files are read-only outside
# its own folders), or that the sandbox's user may not open ("denied").
FILE_KINDS = {errno.ENOENT: "file", errno.ENOTDIR: "file", errno.EISDIR: "file", errno.EROFS: "read-only",
              errno.EACCES: "denied", errno.EPERM: "denied"}
FILE_ERRORS = ((PermissionError, "denied"), (FileNotFoundError, "file"), (NotADirectoryError, "file"),
               (IsADirectoryError, "file"))


def source_lines(source):
    """The module's lines as Python numbers them: only \\n, \\r\\n and \\r end a line (not form feeds)."""
    return io.StringIO(source, newline=None).read().split("\n")


def exception_info(exc, path, lines, project_dir=None):
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
    message = (exc.msg or str(exc)) if isinstance(exc, SyntaxError) else describe(exc)
    return {
        "type": type(exc).__qualname__,
        "message": clip(message, MESSAGE_CAP),
        "line": line,
        "source_line": source_line,
        "traceback": clip(text),
        "origin": origin_of(exc, frames, project_dir),
        "missing": missing_resource(exc),
    }


def missing_resource(exc):
    """What `exc`, or an exception it was raised from, says is not there: the network ("network"), a file
    or folder ("file"), the right to write ("read-only") or to open one ("denied"), with that exception's
    message; None for any other failure. The host decides whether it is the sandbox's lack or the code's
    fault."""
    found, link, seen = None, exc, 0
    try:
        while isinstance(link, BaseException) and seen < CHAIN_CAP:
            number = link.errno if isinstance(link, OSError) and isinstance(link.errno, int) else None
            if isinstance(link, socket.gaierror) or number in NETWORK_ERRNOS:
                return {"kind": "network", "detail": clip(describe(link), MESSAGE_CAP)}
            kind = FILE_KINDS.get(number) or next((k for cls, k in FILE_ERRORS if isinstance(link, cls)),
                                                  None)
            if found is None and kind is not None:
                found = {"kind": kind, "detail": clip(describe(link), MESSAGE_CAP)}
            link, seen = link.__cause__ or link.__context__, seen + 1
    except BaseException:  # an exception class of the job's own that breaks on being looked at
        return None
    return found


def describe(exc):
    try:
        return str(exc)
    except BaseException:
        return f"<unprintable {type(exc).__name__}>"


def origin_of(exc, frames, project_dir):
    """'pkg/core.py:12': the innermost frame inside the project (or the SyntaxError's file), if any."""
    if not project_dir:
        return None
    places = [(f.filename, f.lineno) for f in frames]
    if isinstance(exc, SyntaxError) and exc.filename:
        places.append((exc.filename, exc.lineno))
    prefix = project_dir.rstrip("/") + "/"
    for filename, line in reversed(places):
        if filename and filename.startswith(prefix):
            return f"{filename[len(prefix):]}:{line}"
    return None


def exception_only(exc):
    """The exception's last line(s) as doctest compares them with an example's expected exception."""
    formatted = traceback.format_exception_only(type(exc), exc)
    if sys.version_info < (3, 13):
        return formatted[-1]
    if isinstance(exc, SyntaxError):
        prefixes = (f"{type(exc).__qualname__}:", f"{type(exc).__module__}.{type(exc).__qualname__}:")
        start = next((i for i, text in enumerate(formatted) if text.startswith(prefixes)), 0)
        formatted = formatted[start:]
    return "".join(formatted)


def conftest_error(failed, project_dir):
    """A conftest's error as the module's: no line of the module, the conftest's frames as its traceback,
    and the message saying which conftest raised, at which line, and when."""
    info = exception_info(failed.error, failed.path, [], project_dir)
    where = os.path.relpath(failed.path, project_dir) if project_dir else failed.path
    if info["line"] is not None:
        where += f":{info['line']}"
    info["line"] = None
    info["message"] = clip(f"{info['message']} ({failed.when.format(where=where)})", MESSAGE_CAP)
    return info


def send_report(message):
    write_all(REPORT_FD, (_encode(message) + "\n").encode("utf-8", "surrogatepass"))


class ExampleOutput(io.StringIO):
    """sys.stdout while an example runs (a StringIO, as doctest's): every write goes straight into the
    worker's pipe, so what an example printed is what the worker read, not what this process says."""

    def __init__(self, fd):
        super().__init__()
        self._fd = fd

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"string argument expected, got '{type(text).__name__}'")
        write_all(self._fd, text.encode("utf-8", "surrogatepass"))
        return len(text)


class Commands:
    """The worker's commands, one JSON line each, read from `fd`."""

    def __init__(self, fd):
        self.fd, self.buffer = fd, b""

    def __call__(self):
        while b"\n" not in self.buffer:
            data = os.read(self.fd, 1 << 20)
            if not data:
                return None
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line.decode("utf-8"))


class NoDebugger:
    """Stands in for doctest's per-run Pdb (slow to build, and stdin is /dev/null anyway)."""

    def __init__(self, out):
        pass

    def __getattr__(self, name):  # set_trace, reset, set_continue, ...
        return lambda *args, **kwargs: None


def runtime_object(module, qualname):
    """What doctest's finder would find under `qualname`: defined in this module, with a docstring."""
    found = module
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        if not isinstance(namespace, (dict, types.MappingProxyType)) or part not in namespace:
            return None
        found = namespace[part]
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    if isinstance(found, property):
        return found
    unwrapped = inspect.unwrap(found) if callable(found) else found
    if inspect.isfunction(unwrapped):
        return found if unwrapped.__globals__ is module.__dict__ else None
    if not (inspect.isroutine(unwrapped) or inspect.isclass(found) or inspect.ismethoddescriptor(found)):
        return None
    owner = getattr(getattr(found, "__objclass__", None), "__module__", None)
    owner = owner or getattr(found, "__module__", None)
    return found if owner == module.__name__ else None


def extra_tests(module):
    """The module's `__test__` entries: (name, docstring), as doctest and pytest run them."""
    table = module.__dict__.get("__test__")
    if not isinstance(table, dict):
        return []
    found = []
    for key, value in table.items():
        text = value if isinstance(value, str) else getattr(value, "__doc__", None)
        if isinstance(key, str) and isinstance(text, str):
            found.append((f"__test__.{key}", text))
    return found


class LinesRun:
    """A trace function that notes the lines the examples run in the module's own file (what share of a
    body they exercise); frames of other files are not traced at all."""

    def __init__(self, path):
        self.path, self.lines = path, set()

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename != self.path:
            return None
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self


class Session:
    """Runs what the worker asks for, one command at a time, and answers each with the command's token:
    a docstring's namespace opened (the module's globals, then the conftests' `namespace` over them, as
    pytest), one example run, the module's `__test__` entries listed, the end. It never judges, and it
    learns of an example only when the worker sends it, after the previous one has ended."""

    def __init__(self, module, path, lines, namespace, report, out_fd, trace_lines=False):
        self.module, self.path, self.lines = module, path, lines
        self.namespace, self.report, self.out_fd = namespace or {}, report, out_fd
        self.globs, self.flags = None, 0
        self.ran = LinesRun(path) if trace_lines else None

    def obey(self, command):
        """Run one command; False after the last one."""
        op, token = command.get("op"), command.get("token")
        if op == "item":
            self.close()
            index = command["index"]
            if command.get("lookup") and runtime_object(self.module, command["qualname"]) is None:
                self.report({"absent": index, "token": token})
                return True
            # A documentation file runs as pytest runs a text file: in a namespace of its own.
            self.globs = {"__name__": "__main__"} if command.get("fresh") else dict(self.module.__dict__)
            self.globs.update(self.namespace)
            self.flags = doctest._extract_future_flags(self.globs)
            self.report({"item": index, "token": token})
        elif op == "example":
            self.report({**self.run_example(command), "token": token})
        elif op == "extras":
            self.report({"extras": [{"qualname": name, "docstring": clip(text, GOT_CAP)}
                                    for name, text in extra_tests(self.module)], "token": token})
        else:
            self.close()
            done = {"done": True, "token": token}
            if self.ran is not None:
                done["lines"] = sorted(self.ran.lines)
            self.report(done)
            return False
        return True

    def run_example(self, command):
        index, number, qualname = command["index"], command["number"], command["qualname"]
        saved = sys.stdout, sys.displayhook
        # Each example starts with the interpreter's own display hook and the worker's pipe as stdout,
        # whatever an earlier one left behind.
        sys.stdout, sys.displayhook = ExampleOutput(self.out_fd), ORIGINAL_DISPLAYHOOK
        message = {"out": [index, number]}
        try:
            try:
                name = f"<doctest {qualname}[{number}]>"
                code = compile(command["source"], name, "single", self.flags, True)
                if self.ran is not None:
                    sys.settrace(self.ran)
                exec(code, self.globs)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # as doctest: SystemExit too is an example's outcome
                message["exception"] = exception_info(exc, self.path, self.lines)
                message["exc_msg"] = clip(exception_only(exc), GOT_CAP)
        finally:
            if self.ran is not None:
                sys.settrace(None)
            hooks = (sys.displayhook, sys.__displayhook__)
            changed = any(hook is not ORIGINAL_DISPLAYHOOK for hook in hooks)
            sys.stdout, sys.displayhook = saved
            sys.__displayhook__ = ORIGINAL_DISPLAYHOOK
        if changed:
            message["display_hook_changed"] = True
        return message

    def close(self):
        if self.globs is not None:
            self.globs.clear()
            self.globs = None


def run_job_in_child(job, path, commands, report=send_report, project_dir=None, out_fd=EXAMPLE_FD):
    source = job["source"]
    lines = source_lines(source)
    if job.get("module_file"):
        linecache.cache[path] = (len(source), None, [line + "\n" for line in lines], path)
    else:
        write_scratch(path, source)
        linecache.clearcache()
    sys.path[0:0] = [os.path.join(project_dir or "/", p) for p in job.get("import_paths") or []]
    conftests = [os.path.join(project_dir or "/", p) for p in job.get("conftests") or []]
    loaded = []
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        module = import_job_module(job, path, source, code,
                                   lambda: loaded.extend(load_conftests(conftests)))
        namespace = doctest_namespace(loaded)
    except ConftestFailed as failed:
        report({"import_error": conftest_error(failed, project_dir),
                "memory": isinstance(failed.error, MemoryError)})
        return
    except BaseException as exc:
        report({"import_error": exception_info(exc, path, lines, project_dir),
                "memory": isinstance(exc, MemoryError)})
        return
    report({"imported": True})
    session = Session(module, path, lines, namespace, report, out_fd, bool(job.get("trace_lines")))
    while True:
        command = commands()
        if command is None or not session.obey(command):
            return
