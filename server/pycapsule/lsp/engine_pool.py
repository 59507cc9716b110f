"""The engines of the engine's process (`engine_host`): one per project root for its current settings,
shared by that root's runs and doctest checks, so a root has one warm sandbox; and the one history handle
they all record into.

`EnginePool` owns them. A user (a run, a doctest check) `acquire`s the engine of a root for its settings and
`release`s it when done. A settings change replaces the root's engine on its next `acquire`; the replaced
one is retired and closed once its last user has released it (at once, on a thread of its own, when nobody
uses it: closing a Docker sandbox removes its container). `close` closes them all, and the history.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pycapsule.config import Settings

if TYPE_CHECKING:
    from pycapsule.engine import Engine
    from pycapsule.history import History

log = logging.getLogger(__name__)


class EnginePool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: dict[str, tuple[Engine, Settings]] = {}
        self._users: dict[int, int] = {}
        self._retired: list[Engine] = []
        self._history: History | None = None
        self._history_failed = False

    def acquire(self, settings: Settings, root: Path | None) -> Engine:
        """The engine of `root` (None: no project) for `settings`, made now if there is none for them."""
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
        close_quietly(engine)

    def close(self) -> None:
        """Close every engine (sandboxes, models), in use or not, and the history."""
        with self._lock:
            engines = [*self._retired, *(engine for engine, _ in self._current.values())]
            self._retired, self._current = [], {}
            history, self._history = self._history, None
        for engine in engines:
            close_quietly(engine)
        if history is not None:
            close_quietly(history)

    def _retire(self, engine: Engine) -> None:
        if self._users.get(id(engine), 0) > 0:
            self._retired.append(engine)  # its users keep it until they release it
        else:
            threading.Thread(target=close_quietly, args=(engine,), name="pycapsule-close",
                             daemon=True).start()

    def _store(self) -> History | None:
        from pycapsule.history import History

        if self._history is None and not self._history_failed:
            try:
                self._history = History()
            except Exception as error:  # as the server's Attempts: nothing recorded, nothing lost
                self._history_failed = True
                log.warning("pycapsule: attempts are not recorded: cannot open the history: %s", error)
        return self._history


def close_quietly(part: Any) -> None:
    try:
        part.close()
    except Exception as error:  # closing must go on for the other parts
        log.warning("pycapsule: closing %s failed: %s", type(part).__name__, error)
