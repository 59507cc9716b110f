"""The engine's process (see `engine_process`): `python -m pycapsule.lsp.engine_host FD`, started by the
language server, talking over the socket FD (`host_messages` has the exchange). It does the module-sized work
of the server: the runs and the doctest checks, with one engine per project root (`engine_pool`: one warm
sandbox per root, one history handle).

Every run gets a thread of a pool: it parses the document, finds the target and answers ("resolved", id,
capsule | Refusal), a refusal followed by "done"; on "go" (which may have come first) it runs the engine's
loop and sends each event, then "done", or ("failed", id, text) if the engine broke its promise of events.
Doctest checks queue on one thread of their own (one at a time, so they do not compete for the sandbox): each
parses its module and answers ("planned", id, plan); on
"go" the functions named run (`doctest_check`) and ("checked", id, outcome) follows, then "done".
"cancel" stops a run or a check, "drop" forgets one not yet let go, "close" ends the process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from pygls.workspace.position_codec import PositionCodec

from pycapsule.capsule import Capsule, CapsuleError, no_such_function
from pycapsule.config import project_root
from pycapsule.lsp import wording
from pycapsule.lsp.doctest_check import plan_check, run_check
from pycapsule.lsp.documents import CapsuleOutline, ParsedDocument, parse_text
from pycapsule.lsp.engine_pool import EnginePool
from pycapsule.lsp.host_messages import CheckRequest, Refusal, StartRequest, has_a_body

if TYPE_CHECKING:
    from pycapsule.engine import Engine

log = logging.getLogger(__name__)


def resolve(request: StartRequest) -> Capsule | Refusal:
    """The capsule of the request's target, or why there is none to run."""
    document = parse_text(request.uri, None, request.text, PositionCodec())
    if document.syntax_error is not None:
        # The doctests import the whole module, so nothing can run until the file parses again.
        reason = document.syntax_error.message
        return Refusal("syntax", wording.does_not_parse(reason))
    function = _target(document, request)
    if isinstance(function, Refusal):
        return function
    if request.mode in ("generate", "read_ahead") and not function.is_stub:
        return has_a_body(function.name)
    try:
        capsule = document.capsule(function.qualname)
    except CapsuleError as error:
        return Refusal("target", error.message)
    if capsule is None:
        return Refusal("target", wording.no_function_named(function.qualname, request.uri))
    return capsule


def _target(document: ParsedDocument, request: StartRequest) -> CapsuleOutline | Refusal:
    if request.line is not None:
        function = document.outline_at_line(request.line)
        if function is None:
            return Refusal("target", wording.no_function_at(request.line, request.uri))
        if request.qualname is not None and function.qualname != request.qualname:
            return Refusal("target", wording.not_a_function_at(request.qualname, request.line, request.uri))
        return function
    qualname = request.qualname or ""
    function = document.outline_of(qualname)
    if function is None:
        known = (function.qualname for function in document.outline)
        return Refusal("target", no_such_function(qualname, request.path or request.uri, known))
    return function


RUN_THREADS = 8
"""Runs (and read-aheads) under way at once in the host; more wait for a thread."""

RESOLVE_NICENESS = 10
"""How much lower than the host's own the priority of a start's parse is (nice values, up to 19)."""


def lower_thread_priority() -> None:
    """The calling thread's nice value raised by RESOLVE_NICENESS. Linux only: there it is a per-thread
    attribute, set through the thread's id; elsewhere that id is not one `setpriority` takes."""
    if not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):
        niceness = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, niceness + RESOLVE_NICENESS))


def _read_ahead(engine: Engine, capsule: Capsule, cancel: threading.Event) -> None:
    from pycapsule.model_client import ModelError

    try:
        held = engine.read_ahead(capsule, cancel)
    except ModelError as error:  # nothing is lost: the run reads its whole prompt
        log.info("pycapsule: reading %s ahead failed: %s", capsule.qualname, error)
        return
    log.info("pycapsule: %s read ahead: %d prompt tokens held", capsule.qualname, held)


class _Work:
    """A run or a check, as the server decides it: let go (with the functions to check) or not, cancelled."""

    def __init__(self) -> None:
        self.cancel = threading.Event()
        self.decided = threading.Event()
        self.go = False
        self.targets: tuple[str, ...] = ()


class Host:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._send_lock = threading.Lock()
        self._engines = EnginePool()
        self._work: dict[str, _Work] = {}
        # Threads that outlive their runs: a sandbox started on a thread dies with it (the parent-death
        # signal follows the thread that started it), and the engines keep their sandboxes warm.
        self._threads = ThreadPoolExecutor(max_workers=RUN_THREADS, thread_name_prefix="pycapsule-run")
        # A start's parse gives way to the editor: the server and the editor, answering the user's next
        # request, wake while it runs (docs/server.md, "A run's start on a big file"). It gets a thread of
        # its own so that nothing a run starts (sandboxes, the model) inherits the lower priority.
        self._resolver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-resolve",
                                            initializer=lower_thread_priority)
        # Checks queue on one thread that lives as long as the process: the sandbox it may start stays warm.
        self._checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-check")

    def serve(self) -> None:
        while True:
            try:
                message = self._connection.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "close":
                break
            work = self._work.get(message[1])
            if kind == "start":
                work = self._work[message[1]] = _Work()
                self._threads.submit(self._run, message[1], message[2], work)
            elif kind == "check":
                work = self._work[message[1]] = _Work()
                self._checks.submit(self._check, message[1], message[2], work)
            elif work is None:
                continue
            elif kind in ("go", "drop"):
                work.go = kind == "go"
                work.targets = message[2] if len(message) > 2 else ()
                work.decided.set()
            elif kind == "cancel":
                work.cancel.set()
                work.decided.set()
        for work in list(self._work.values()):
            work.cancel.set()
            work.decided.set()
        for pool in (self._threads, self._resolver, self._checks):
            pool.shutdown(wait=False, cancel_futures=True)
        self._engines.close()

    def _send(self, message: tuple[Any, ...]) -> None:
        # OSError: the server is gone; the runs end through their cancel event or on their own
        with self._send_lock, contextlib.suppress(OSError):
            self._connection.send(message)

    def _run(self, run_id: str, request: StartRequest, run: _Work) -> None:
        try:
            answer = self._resolver.submit(resolve, request).result()
            self._send(("resolved", run_id, answer))
            if not isinstance(answer, Refusal):
                run.decided.wait()  # a refusal needs no word from the server: nothing would run
            if isinstance(answer, Refusal) or not run.go or run.cancel.is_set():
                self._send(("done", run_id))
                return
            engine = self._engines.acquire(request.settings, project_root(request.project_anchor))
            try:
                if request.mode == "read_ahead":
                    _read_ahead(engine, answer, run.cancel)
                else:
                    fix = request.mode == "fix"
                    for event in engine.generate(answer, cancel=run.cancel, from_current_body=fix):
                        self._send(("event", run_id, event))
            finally:
                self._engines.release(engine)
            self._send(("done", run_id))
        except Exception as error:  # the engine promises events, not exceptions; keep the editor informed
            log.exception("pycapsule: the run of %s failed", request.qualname or request.uri)
            self._send(("failed", run_id, wording.failed(error)))
        finally:
            self._work.pop(run_id, None)

    def _check(self, check_id: str, request: CheckRequest, check: _Work) -> None:
        try:
            document, plan = plan_check(request)
            self._send(("planned", check_id, plan))
            check.decided.wait()
            if check.go and check.targets and not check.cancel.is_set():
                engine = self._engines.acquire(request.settings, project_root(request.project_anchor))
                try:
                    outcome = run_check(engine, document, check.targets, check.cancel)
                finally:
                    self._engines.release(engine)
                if outcome is not None:
                    self._send(("checked", check_id, outcome))
            self._send(("done", check_id))
        except Exception as error:  # the sandbox is unavailable, or a bug: the server says so in its log
            log.info("pycapsule: the doctest check of %s failed: %s", request.uri, error, exc_info=True)
            self._send(("failed", check_id, str(error)))
        finally:
            self._work.pop(check_id, None)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1 or not arguments[0].isdigit():
        print("usage: python -m pycapsule.lsp.engine_host FD (started by `pycapsule serve`)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    os.dup2(2, 1)  # whatever prints goes to the server's log, never to the editor's channel
    Host(Connection(int(arguments[0]))).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
