"""The SQLite store's layout: its table, how a file is known to be a store, how one is made, its
journal mode, and its reclaim.

``store/sqlite.py`` opens and writes stores of this layout; a store of another layout is refused.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Final

from preflight_fsm.store import wal as _wal
from preflight_fsm.store.folder import make_store_folder

__all__ = [
    "APPLICATION_ID",
    "RECLAIM",
    "SCHEMA",
    "SCHEMA_VERSION",
    "create_store",
    "layout_problem",
    "use_wal",
]

APPLICATION_ID: Final = 0x5046534D
"""``PRAGMA application_id`` of every session store ("PFSM"): how a file is known to be one."""

SCHEMA_VERSION: Final = 2
"""``PRAGMA user_version`` of the layout below; a store of another version is refused."""

SCHEMA = (
    """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    expire_after REAL NOT NULL,
    flow TEXT NOT NULL
);
CREATE INDEX sessions_by_flow ON sessions (flow);
"""
    + _wal.STATE_TABLE
)
"""Not a STRICT table on purpose: a row another tool wrote with wrong types must be readable
enough to be reported as corrupt (CorruptSession) rather than break the whole file.
"""

RECLAIM: Final = """
DELETE FROM sessions WHERE rowid IN (
    SELECT rowid FROM sessions
    WHERE typeof(updated_at) IN ('integer', 'real') AND typeof(expire_after) IN ('integer', 'real')
        AND expire_after > 0 AND ? - updated_at >= expire_after
    LIMIT ?
)
"""
"""Removes up to ``?`` (2nd) sessions expired at ``?`` (1st), as ``SessionStore.is_expired``
says; a row with unreadable times stays, reported as corrupt by whoever reads it."""


def create_store(path: Path) -> None:
    """Build a complete store under a temporary name, then link it to ``path`` atomically.

    Of several processes creating the same store at once, one link wins and every process
    opens that one; nobody ever opens a file that is not yet a complete store.
    """
    make_store_folder(path.parent)
    import tempfile  # here: a command on an existing store does not need it (2 ms of a start)

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    os.close(fd)
    try:
        db = sqlite3.connect(temporary, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        finally:
            db.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process created it first: use theirs
        except OSError:
            # A file system without hard links: a rename cannot refuse to overwrite, so check.
            if not path.exists():
                os.replace(temporary, path)
    finally:
        for leftover in (temporary, f"{temporary}-wal", f"{temporary}-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def layout_problem(db: sqlite3.Connection) -> str | None:
    """None when the database ``db`` opens is a store of this layout; else what it is instead,
    as the end of a sentence naming the file (``text_factory=bytes``)."""
    try:
        application_id = db.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if "not a database" not in str(exc):
            raise
        return "is not a SQLite database"
    if application_id != APPLICATION_ID:
        tables = [bytes(n).decode() for (n,) in db.execute("SELECT name FROM sqlite_master")]
        if application_id == 0 and tables == ["sessions", "sqlite_autoindex_sessions_1"]:
            # D60: the unreleased first layout is not migrated
            return (
                "is a session store of an earlier, unreleased preflight-fsm (layout 1); "
                "move it away and start again"
            )
        if application_id or tables:
            return "is a SQLite database of another application"
        return "is an empty SQLite database"
    user_version = db.execute("PRAGMA user_version").fetchone()[0]
    if user_version != SCHEMA_VERSION:
        return f"has the store layout {user_version}, not {SCHEMA_VERSION}"
    return None


def use_wal(db: sqlite3.Connection, synchronous: str) -> None:
    """Put the store's connection ``db`` in WAL mode with ``synchronous`` (``NORMAL``/``FULL``).

    A store is always created in WAL mode and the mode is kept in the file; it is set again in
    case a tool changed it. Several processes may do this at once: the lock it takes is not
    always waited for by busy_timeout, so it is retried briefly.
    """
    for attempt in range(50):
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 49:
                raise
            time.sleep(0.02)
    if bytes(mode).decode().lower() != "wal":
        raise sqlite3.OperationalError(f"the file cannot use WAL (journal_mode is {mode!r})")
    # WAL + NORMAL: committed steps survive any process crash (SIGKILL included); FULL adds
    # an fsync per commit so they survive a power cut too (D34).
    db.execute(f"PRAGMA synchronous={synchronous}")
