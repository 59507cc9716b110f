"""History: every attempt in sqlite3, newest first, shared safely by several processes."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from pycapsule.history import AttemptRecord, History, application, default_path

RECORD = AttemptRecord(
    path="/p/mod.py", qualname="C.m", run_id="r1", attempt=1, mode="generate", verdict="failed",
    code="def m(self):\n    return 0\n", condensed="Failed example: C().m()\nExpected: 1\nGot: 0",
    model="fake-coder", prompt_tokens=120, completion_tokens=30, model_seconds=1.5, check_seconds=0.01,
    created=1000.0)


def test_the_database_lives_where_the_environment_says(private_history: Path) -> None:
    assert default_path() == private_history
    History().record(RECORD)
    assert private_history.is_file()


def test_attempts_come_back_newest_first_per_function(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    history.record(RECORD)
    history.record(replace(RECORD, attempt=2, mode="fix", verdict="passed", condensed="", created=1001.0))
    history.record(replace(RECORD, qualname="other", created=1002.0))
    attempts = history.attempts("/p/mod.py", "C.m")
    assert [(a.attempt, a.verdict) for a in attempts] == [(2, "passed"), (1, "failed")]
    assert attempts[1].first_error_line == "Failed example: C().m()"
    assert history.attempts("/p/mod.py", "C.m", limit=1)[0].attempt == 2


def test_it_survives_a_restart(tmp_path: Path) -> None:
    History(tmp_path / "h.sqlite3").record(RECORD)
    assert History(tmp_path / "h.sqlite3").attempts("/p/mod.py", "C.m") == [RECORD]


def _write_many(path: str, writer: int) -> None:
    history = History(Path(path))
    for n in range(200):
        history.record(replace(RECORD, run_id=f"w{writer}", attempt=n))


def _at_once(target: Callable[[str, int], None], path: Path, writers: Iterable[int]) -> None:
    """`target(path, writer)` in a process of its own for each writer, all at once; each must succeed."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=target, args=(str(path), w)) for w in writers]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0


def _open_files_under(folder: Path) -> list[str]:
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with suppress(FileNotFoundError):  # the descriptor listdir itself used
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [link for link in links if link.startswith(str(folder))]


def test_close_closes_what_every_thread_opened(tmp_path: Path) -> None:
    """The language server records from run threads and a pool that outlive a history: closing it must
    not leave their connections (and the database's files) open."""
    folder = tmp_path / "history"
    history = History(folder / "h.sqlite3")
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda n: history.record(replace(RECORD, attempt=n)), range(8)))
        assert len(history.attempts("/p/mod.py", "C.m")) == 8
        history.close()
        assert _open_files_under(folder) == []
    assert len(history.attempts("/p/mod.py", "C.m")) == 8  # a later call opens it again
    history.close()


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    History(path)
    _at_once(_write_many, path, (1, 2))
    with sqlite3.connect(path) as db:
        counts = dict(db.execute("SELECT run_id, count(*) FROM attempts GROUP BY run_id").fetchall())
    assert counts == {"w1": 200, "w2": 200}


FIRST_SCHEMA = """
CREATE TABLE attempts (
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
);
CREATE INDEX attempts_by_function ON attempts (path, qualname, created);
"""
"""The table as the first versions made it, before a run's result was told on its row."""
FIRST_COLUMNS = ("path", "qualname", "run_id", "attempt", "mode", "verdict", "code", "condensed", "model",
                 "prompt_tokens", "completion_tokens", "model_seconds", "check_seconds", "created")


def _write_as_the_first_versions_did(path: Path, record: AttemptRecord) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(FIRST_SCHEMA)
        db.execute(f"INSERT INTO attempts ({', '.join(FIRST_COLUMNS)}) VALUES ({', '.join('?' * 14)})",
                   [getattr(record, column) for column in FIRST_COLUMNS])
    db.close()


def test_a_result_is_told_on_the_row_of_the_attempt_that_made_it(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    history.record(RECORD)
    history.record(replace(RECORD, attempt=2, verdict="passed", condensed="", created=1001.0))
    history.record(replace(RECORD, run_id="r2", attempt=2, verdict="passed", created=1002.0))
    why = "the function (lines 3-7) changed while the run was going on"
    history.conclude("r1", 2, verified="verified by 1 example")
    history.conclude("r1", 2, applied=application("not applied", why))
    newest, passed, failed = history.attempts("/p/mod.py", "C.m")
    assert (passed.verified, passed.applied) == ("verified by 1 example", f"not applied: {why}")
    assert passed.not_applied == ("not applied", why)
    assert (failed.verified, failed.applied, failed.not_applied) == ("", "", ("", ""))
    assert (newest.verified, newest.applied) == ("", ""), "another run's row with the same attempt number"


def test_a_history_file_of_the_first_schema_still_reads_and_takes_the_results(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _write_as_the_first_versions_did(path, RECORD)

    history = History(path)

    assert history.attempts("/p/mod.py", "C.m") == [RECORD], "the old row, with nothing told of its result"
    history.record(replace(RECORD, attempt=2, verdict="passed", created=1001.0,
                           verified="verified by 1 example"))
    history.conclude("r1", 2, applied="applied")
    assert [(a.attempt, a.verified, a.applied) for a in history.attempts("/p/mod.py", "C.m")] == [
        (2, "verified by 1 example", "applied"), (1, "", "")]
    history.close()
    assert History(path).attempts("/p/mod.py", "C.m", limit=1)[0].verified == "verified by 1 example"


def test_the_first_versions_can_still_write_to_a_migrated_file(tmp_path: Path) -> None:
    """An older pycapsule (another editor's server, a CLI from another venv) names its columns: the added
    ones take their defaults."""
    path = tmp_path / "h.sqlite3"
    History(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"INSERT INTO attempts ({', '.join(FIRST_COLUMNS)}) VALUES ({', '.join('?' * 14)})",
                   [getattr(RECORD, column) for column in FIRST_COLUMNS])
    db.close()
    assert History(path).attempts("/p/mod.py", "C.m") == [RECORD]


def _open_and_write(path: str, writer: int) -> None:
    History(Path(path)).record(replace(RECORD, run_id=f"w{writer}", verified="verified by 1 example"))


def test_processes_opening_an_old_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _write_as_the_first_versions_did(path, RECORD)
    _at_once(_open_and_write, path, range(4))
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(attempts)")]
        written = db.execute("SELECT run_id, verified FROM attempts ORDER BY run_id").fetchall()
    db.close()
    assert columns == [*("id", *FIRST_COLUMNS), "verified", "applied"]
    assert written == [("r1", ""), *((f"w{w}", "verified by 1 example") for w in range(4))]
