"""Every attempt, kept in sqlite3 under the user's cache dir: what hover shows and what bench reports.

The database lives at `$PYCAPSULE_HISTORY` or `platformdirs.user_cache_dir("pycapsule")/history.sqlite3`.
WAL mode and a busy timeout let several processes (editor, CLI, bench) write at once. A function is
identified by its resolved file path and qualname. Nothing secret is stored: there is no column for
settings or keys, only the model's name.

A run's result is told on the row of the attempt that produced it: what verified it (`verified`, written by
the loop when the run ends, the same for the CLI and the language server) and what became of it
(`applied`, written by the language server once the editor applied or refused the edit).

The schema only grows: a column added later gets a default, and `History` adds what an older file lacks
when it opens it (in one transaction, so two processes opening an old file at once add it once), so
history files written by earlier versions stay readable and earlier versions can still write to newer
files (they name their columns).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import platformdirs

_TABLE = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    qualname TEXT NOT NULL,
    run_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    mode TEXT NOT NULL,
    verdict TEXT NOT NULL,
    code TEXT NOT NULL,
    condensed TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    model_seconds REAL NOT NULL,
    check_seconds REAL NOT NULL,
    created REAL NOT NULL
)"""
_ADDED = (("verified", "TEXT NOT NULL DEFAULT ''"), ("applied", "TEXT NOT NULL DEFAULT ''"))
"""Columns added after the first schema, in order: (name, declaration with the default old rows get)."""
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS attempts_by_function ON attempts (path, qualname, created)",
    "CREATE INDEX IF NOT EXISTS attempts_by_run ON attempts (run_id, attempt)",
)

_COLUMNS = ("path", "qualname", "run_id", "attempt", "mode", "verdict", "code", "condensed", "model",
            "prompt_tokens", "completion_tokens", "model_seconds", "check_seconds", "created",
            *(name for name, _ in _ADDED))

APPLIED = "applied"
"""`AttemptRecord.applied` of a result the editor applied."""


@dataclass(frozen=True)
class AttemptRecord:
    path: str
    """The resolved file path ('' for an unsaved buffer)."""
    qualname: str
    run_id: str
    """Groups the attempts of one generation."""
    attempt: int
    mode: str
    """'generate', 'fix', 'restart' or 'check'."""
    verdict: str
    """'passed', 'failed', 'not_verified' or the sandbox status ('timeout', 'memory', ...)."""
    code: str
    condensed: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    model_seconds: float
    check_seconds: float
    created: float
    """Unix time the attempt finished."""
    verified: str = ""
    """Set on the attempt whose body was its run's result: what the run's outcome said verified it ('verified
    by 3 examples + 12 tests (tests/test_x.py; 9 of 10 body lines run)', 'only weakly verified by ...', 'not
    verified: ...'); '' on the other attempts and in rows older than the column."""
    applied: str = ""
    """Set on the same attempt when an editor was sent its edit: `APPLIED`, or `application`'s 'not applied:
    why' / 'unconfirmed: why'; '' when nothing was told (the CLI, a result with no edit, older rows)."""

    @property
    def first_error_line(self) -> str:
        return next((line.strip() for line in self.condensed.splitlines() if line.strip()), "")

    @property
    def not_applied(self) -> tuple[str, str]:
        """('not applied' or 'unconfirmed', why) when the result was sent to an editor that did not apply it
        (or did not say); ('', '') otherwise."""
        if self.applied in ("", APPLIED):
            return "", ""
        state, _, why = self.applied.partition(": ")
        return state, why


def application(state: str, reason: str) -> str:
    """`AttemptRecord.applied` of a result that was not applied: `state` ('not applied', 'unconfirmed') and
    why ('the function (lines 3-7) changed while the run was going on')."""
    return f"{state}: {reason}"


def default_path() -> Path:
    override = os.environ.get("PYCAPSULE_HISTORY")
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("pycapsule")) / "history.sqlite3"


def function_path(path: Path | None) -> str:
    return str(path.resolve()) if path is not None else ""


def _key(path: Path | str | None) -> str:
    return path if isinstance(path, str) else function_path(path)


class History:
    """One connection, shared by the threads that use the history (each call holds it under a lock), so
    that `close` closes everything it opened; several processes share the database through WAL."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        with self._connection() as db:
            _create_or_migrate(db)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._db is None:
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA busy_timeout = 30000")
                _use_wal(db)
                db.execute("PRAGMA synchronous = NORMAL")
                self._db = db
            yield self._db

    def record(self, record: AttemptRecord) -> None:
        values = [getattr(record, column) for column in _COLUMNS]
        placeholders = ", ".join("?" for _ in _COLUMNS)
        with self._connection() as db:
            db.execute(f"INSERT INTO attempts ({', '.join(_COLUMNS)}) VALUES ({placeholders})", values)

    def conclude(self, run_id: str, attempt: int, *, verified: str | None = None,
                 applied: str | None = None) -> None:
        """Tell the result of run `run_id` on the row of `attempt`, the attempt that produced it: what
        verified it and what became of it (None: left as it is)."""
        told = {name: value for name, value in (("verified", verified), ("applied", applied))
                if value is not None}
        if not told:
            return
        settings = ", ".join(f"{name} = ?" for name in told)
        with self._connection() as db:
            db.execute(f"UPDATE attempts SET {settings} WHERE run_id = ? AND attempt = ?",
                       (*told.values(), run_id, attempt))

    def attempts(self, path: Path | str | None, qualname: str, limit: int = 20) -> list[AttemptRecord]:
        """The newest attempts first."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM attempts WHERE path = ? AND qualname = ? "
                "ORDER BY created DESC, id DESC LIMIT ?", (_key(path), qualname, limit)).fetchall()
        return [AttemptRecord(*row) for row in rows]

    def count(self, path: Path | str | None, qualname: str) -> int:
        """How many attempts were recorded for this function."""
        with self._connection() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM attempts WHERE path = ? AND qualname = ?", (_key(path), qualname)
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        """Closes the connection, whichever threads used it; a later call opens a new one."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


def _missing_columns(db: sqlite3.Connection) -> list[tuple[str, str]] | None:
    """The added columns the table lacks; None when there is no table yet."""
    have = {row[1] for row in db.execute("PRAGMA table_info(attempts)")}
    if not have:
        return None
    return [(name, declaration) for name, declaration in _ADDED if name not in have]


def _use_wal(db: sqlite3.Connection, seconds: float = 30.0) -> None:
    """Switch the file to write-ahead logging. The switch needs the file to itself, and SQLite answers
    "database is locked" at once, without its busy wait, when another process holds it (several processes
    opening an old file at once): try again until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _create_or_migrate(db: sqlite3.Connection) -> None:
    """The table and its indexes as this version writes them, created or brought up to date. A file that is
    already up to date is only read; else the change is made under the write lock, after looking again (a
    process that opened the file meanwhile may have made it)."""
    if _missing_columns(db) == []:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        missing = _missing_columns(db)
        if missing is None:
            db.execute(_TABLE)
            missing = list(_ADDED)
        for name, declaration in missing:
            db.execute(f"ALTER TABLE attempts ADD COLUMN {name} {declaration}")
        for index in _INDEXES:
            db.execute(index)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
