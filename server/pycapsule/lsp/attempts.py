"""The language server's handle on the attempt history: what hover shows, and how a run's edit ended.

`Attempts` owns this process's history store (`pycapsule.history.History`, the sqlite database the CLI
shares), opened on first use and closed at shutdown. The runs record their attempts from the engine's
process, through its own one handle (`engine_pool`); hover reads here, not through that process: a hover
must answer within milliseconds, without starting the engine's process or queueing behind a run's start
there, and sqlite is made for readers and writers in several processes (the CLI writes the same file). It
also owns the attempts on buffers without a file (untitled): the store keys attempts by path, so those are
kept in memory, this session only.

A run's result is told on the record of the attempt that produced it: what verified it (the loop writes
that into the store itself, the same for the CLI; `concluded` copies it into an untitled buffer's record)
and what became of its edit (`concluded`, once the editor applied or refused it).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pycapsule.history import AttemptRecord, History

SHOWN = 10
"""Attempts a hover lists."""
_UNSAVED_KEPT = 50
log = logging.getLogger(__name__)


class Attempts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._store: History | None = None
        self._store_failed = False
        self._unsaved: dict[tuple[str, str], list[AttemptRecord]] = {}

    def store(self) -> History | None:
        """The history database; None when it cannot be opened (then nothing is recorded or shown)."""
        with self._lock:
            if self._store is None and not self._store_failed:
                try:
                    self._store = History()
                except (OSError, sqlite3.Error) as error:
                    self._store_failed = True
                    log.warning("pycapsule: attempts are not recorded: cannot open the history: %s", error)
            return self._store

    def newest(self, uri: str, path: Path | None, qualname: str) -> list[AttemptRecord]:
        """The latest attempts at a function, newest first: from the store for a file (`path`), from this
        session's memory for a buffer without one (`path` None)."""
        if path is None:
            return list(reversed(self._unsaved.get((uri, qualname), [])))[:SHOWN]
        store = self.store()
        return store.attempts(path, qualname, limit=SHOWN) if store is not None else []

    def remember_unsaved(
        self, uri: str, qualname: str, *, run_id: str, mode: str, model: str, finished: Any
    ) -> None:
        """An attempt (`loop.AttemptFinished`) on a buffer without a file."""
        usage = finished.usage
        records = self._unsaved.setdefault((uri, qualname), [])
        records.append(
            AttemptRecord(
                path="",
                qualname=qualname,
                run_id=run_id,
                attempt=finished.attempt,
                mode=mode,
                verdict=finished.verdict or ("passed" if finished.passed else "failed"),
                code=finished.code,
                condensed=finished.condensed,
                model=model,
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                model_seconds=finished.model_seconds,
                check_seconds=max(finished.seconds - finished.model_seconds, 0.0),
                created=time.time(),
            )
        )
        del records[:-_UNSAVED_KEPT]

    def concluded(self, uri: str, path: Path | None, run_id: str, outcome: Any, applied: str = "") -> None:
        """The end of a run (`events.Outcome`) on its result's record: for a file, what became of its edit
        (`applied`, '' when none was sent); for a buffer without one (`run_id`: what `remember_unsaved` was
        given), also what verified it."""
        attempt = outcome.result_attempt
        if attempt is None:
            return
        if path is None:
            records = self._unsaved.get((uri, outcome.qualname), [])
            for n, record in enumerate(records):
                if record.run_id == run_id and record.attempt == attempt:
                    records[n] = replace(record, verified=outcome.verification, applied=applied)
            return
        self.applied(outcome.run_id, attempt, applied)

    def applied(self, run_id: str, attempt: int, applied: str) -> None:
        """Record what became of attempt `attempt` of run `run_id` on a file ('': no edit was sent)."""
        store = self.store() if applied and run_id else None
        if store is None:
            return
        try:
            store.conclude(run_id, attempt, applied=applied)
        except sqlite3.Error as error:  # the user has the result; only the history lacks how it ended
            log.warning("pycapsule: could not record what became of the result: %s", error)

    def close(self) -> None:
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.close()
