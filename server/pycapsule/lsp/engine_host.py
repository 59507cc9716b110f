"""The engine's process (see `engine_process`): `python -m pycapsule.lsp.engine_host FD`, started by the
language server, talking over the socket FD. Every run gets a thread of a pool: it parses the document,
finds the target and answers ("resolved", id, capsule | Refusal); on "go" it runs the engine's loop and
sends each event ("event", id, event), then ("done", id), or ("failed", id, text) if the engine broke
its promise of events. "cancel" stops a run, "drop" forgets one not yet let go, "close" ends the process.

Engines are kept per project root for their settings, as the server's own `Engines` keeps them for the
doctest checks: a settings change replaces the root's engine, closed once its last run ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.workspace.position_codec import PositionCodec

from pycapsule.capsule import Capsule, CapsuleError, no_such_function
from pycapsule.config import Settings, project_root
from pycapsule.lsp.documents import CapsuleOutline, parse_text
from pycapsule.lsp.engine_process import Refusal, StartRequest
from pycapsule.lsp.protocol import CMD_SELF_DEBUG

if TYPE_CHECKING:
    from pycapsule.engine import Engine
    from pycapsule.history import History

log = logging.getLogger(__name__)


def resolve(request: StartRequest) -> Capsule | Refusal:
    """The capsule of the request's target, or why there is none to run."""
    document = parse_text(request.uri, None, request.text, PositionCodec())
    if document.syntax_error is not None:
        # The doctests import the whole module, so nothing can run until the file parses again.
        reason = document.syntax_error.message
        return Refusal("syntax", f"nothing was started: the file does not parse ({reason}); fix that first.")
    function: CapsuleOutline | None
    if request.qualname is not None:
        function = document.outline_of(request.qualname)
        if function is None:
            known = (function.qualname for function in document.outline)
            sentence = no_such_function(request.qualname, request.path or request.uri, known)
            return Refusal("target", sentence[:1].upper() + sentence[1:])
    else:
        function = document.outline_at_line(request.line or 0)
        if function is None:
            line = (request.line or 0) + 1
            return Refusal("target", f"There is no function at line {line} of {request.uri}.")
    if request.mode in ("generate", "read_ahead") and not function.is_stub:
        return Refusal("target", f"`{function.name}` already has a body; use {CMD_SELF_DEBUG} to debug it.")
    try:
        capsule = document.capsule(function.qualname)
    except CapsuleError as error:
        return Refusal("target", error.message)
    if capsule is None:
        return Refusal("target", f"There is no function `{function.qualname}` in {request.uri}.")
    return capsule


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


class _Engines:
    """One engine per project root for its current settings; a replaced one closes after its last run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: dict[str, tuple[Engine, Settings]] = {}
        self._users: dict[int, int] = {}
        self._retired: list[Engine] = []
        self._history: History | None = None
        self._history_failed = False

    def acquire(self, settings: Settings, root: Path | None) -> Engine:
        from pycapsule.engine import Engine

        with self._lock:
            key = str(root)
            current = self._current.get(key)
            if current is None or current[1] != settings:
                if current is not None:
                    self._retire(current[0])
                engine = Engine(settings, project_root=root, history=self._store())
                current = self._current[key] = (engine, settings)
            self._users[id(current[0])] = self._users.get(id(current[0]), 0) + 1
            return current[0]

    def release(self, engine: Engine) -> None:
        with self._lock:
            self._users[id(engine)] -= 1
            if self._users[id(engine)] > 0:
                return
            del self._users[id(engine)]
            if engine not in self._retired:
                return
            self._retired.remove(engine)
        _close_quietly(engine)

    def close(self) -> None:
        with self._lock:
            engines = [*self._retired, *(engine for engine, _ in self._current.values())]
            self._retired, self._current = [], {}
            history, self._history = self._history, None
        for engine in engines:
            _close_quietly(engine)
        if history is not None:
            _close_quietly(history)

    def _retire(self, engine: Engine) -> None:
        if self._users.get(id(engine), 0) > 0:
            self._retired.append(engine)
        else:
            threading.Thread(target=_close_quietly, args=(engine,), daemon=True).start()

    def _store(self) -> History | None:
        from pycapsule.history import History

        if self._history is None and not self._history_failed:
            try:
                self._history = History()
            except Exception as error:  # as the server's Attempts: nothing recorded, nothing lost
                self._history_failed = True
                log.warning("pycapsule: attempts are not recorded: cannot open the history: %s", error)
        return self._history


def _close_quietly(part: Any) -> None:
    try:
        part.close()
    except Exception as error:  # closing must go on for the other parts
        log.warning("pycapsule: closing %s failed: %s", type(part).__name__, error)


def _read_ahead(engine: Engine, capsule: Capsule, cancel: threading.Event) -> None:
    from pycapsule.model_client import ModelError

    try:
        held = engine.read_ahead(capsule, cancel)
    except ModelError as error:  # nothing is lost: the run reads its whole prompt
        log.info("pycapsule: reading %s ahead failed: %s", capsule.qualname, error)
        return
    log.info("pycapsule: %s read ahead: %d prompt tokens held", capsule.qualname, held)


class _Run:
    def __init__(self) -> None:
        self.cancel = threading.Event()
        self.decided = threading.Event()
        self.go = False


class Host:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._send_lock = threading.Lock()
        self._engines = _Engines()
        self._runs: dict[str, _Run] = {}
        # Threads that outlive their runs: a sandbox started on a thread dies with it (the parent-death
        # signal follows the thread that started it), and the engines keep their sandboxes warm.
        self._threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="pycapsule-run")
        # A start's parse gives way to the editor: the server and the editor, answering the user's next
        # request, wake while it runs (docs/server.md, "A run's start on a big file"). It gets a thread of
        # its own so that nothing a run starts (sandboxes, the model) inherits the lower priority.
        self._resolver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pycapsule-resolve",
                                            initializer=lower_thread_priority)

    def serve(self) -> None:
        while True:
            try:
                message = self._connection.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "close":
                break
            run = self._runs.get(message[1])
            if kind == "start":
                run = self._runs[message[1]] = _Run()
                self._threads.submit(self._run, message[1], message[2], run)
            elif run is None:
                continue
            elif kind in ("go", "drop"):
                run.go = kind == "go"
                run.decided.set()
            elif kind == "cancel":
                run.cancel.set()
                run.decided.set()
        for run in list(self._runs.values()):
            run.cancel.set()
            run.decided.set()
        self._threads.shutdown(wait=False, cancel_futures=True)
        self._resolver.shutdown(wait=False, cancel_futures=True)
        self._engines.close()

    def _send(self, message: tuple[Any, ...]) -> None:
        # OSError: the server is gone; the runs end through their cancel event or on their own
        with self._send_lock, contextlib.suppress(OSError):
            self._connection.send(message)

    def _run(self, run_id: str, request: StartRequest, run: _Run) -> None:
        try:
            answer = self._resolver.submit(resolve, request).result()
            self._send(("resolved", run_id, answer))
            run.decided.wait()
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
            self._send(("failed", run_id, f"{type(error).__name__}: {error}"))
        finally:
            self._runs.pop(run_id, None)


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
