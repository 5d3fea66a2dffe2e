"""The embedded default store: one SQLite file (stdlib ``sqlite3``) in WAL mode.

Several processes may share the file. Every write is one ``BEGIN IMMEDIATE`` transaction, so the
compare-and-set on the version (``UPDATE ... WHERE id = ? AND version = ?``) cannot interleave
with another writer, and a process killed mid-write leaves the previous version intact: SQLite's
journal rolls the torn transaction back when the file is next opened.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from preflight_fsm.errors import (
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    Clock,
    SessionStore,
    StoredSession,
    record_from,
)

__all__ = ["SCHEMA", "SqliteStore"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)
"""
"""Not a STRICT table on purpose: a row another tool wrote with wrong types must be readable
enough to be reported as corrupt (CorruptSession) rather than break the whole file."""

_COLUMNS = "version, snapshot, created_at, updated_at"


class SqliteStore(SessionStore):
    """Sessions in one SQLite file; safe across threads and processes sharing the file.

    ``timeout`` is how long a write waits for another process's write lock. ``synchronous`` is
    SQLite's setting for WAL mode: ``"NORMAL"`` (the default) keeps every committed step through
    any process crash and never corrupts the file, but a power cut may lose the last steps;
    ``"FULL"`` also survives power cuts, at an fsync per step (about a third of the throughput).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        expire_after: float = DEFAULT_EXPIRE_AFTER,
        clock: Clock = time.time,
        timeout: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> None:
        super().__init__(expire_after=expire_after, clock=clock)
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', not {synchronous!r}")
        self.synchronous = synchronous
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(
                f"cannot open the session store {str(self.path)!r}: {exc}"
            ) from None
        try:
            self._setup()
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreUnavailable(
                f"cannot use the session store {str(self.path)!r}: {exc}"
            ) from None

    def _setup(self) -> None:
        db = self._db
        # Several processes may open a new file at once; switching it to WAL takes a lock that
        # busy_timeout does not always wait for, so retry briefly.
        for attempt in range(50):
            try:
                mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.02)
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"the file cannot use WAL (journal_mode is {mode})")
        # WAL + NORMAL: committed steps survive any process crash (SIGKILL included); FULL adds
        # an fsync per commit so they survive a power cut too (D34).
        db.execute(f"PRAGMA synchronous={self.synchronous}")
        db.execute(SCHEMA)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- the interface -------------------------------------------------------------------------

    def get(self, session_id: str) -> StoredSession:
        self.checked_id(session_id)
        with self._guard():
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            record = record_from(session_id, *row)
            if self.is_expired(record.updated_at):
                # Only the version read is removed: a write that just came first stays.
                with self._transaction():
                    self._db.execute(
                        "DELETE FROM sessions WHERE id = ? AND version = ?",
                        (session_id, record.version),
                    )
                raise SessionExpired(session_id, self.expire_after)
            return record

    def create(self, session_id: str, snapshot: str) -> StoredSession:
        self.new_id_checked(session_id)
        self.checked_snapshot(snapshot)
        with self._guard():
            now = self.clock()
            try:
                with self._transaction():
                    self._db.execute(
                        f"INSERT INTO sessions (id, {_COLUMNS}) VALUES (?, 1, ?, ?, ?)",
                        (session_id, snapshot, now, now),
                    )
            except sqlite3.IntegrityError:
                raise SessionConflict(session_id, None, None) from None
            return StoredSession(session_id, 1, snapshot, now, now)

    def put(self, session_id: str, snapshot: str, expected_version: int) -> StoredSession:
        self.checked_id(session_id)
        self.checked_snapshot(snapshot)
        with self._guard():
            refusal: Exception | None = None
            with self._transaction():
                # The write lock is held from here to COMMIT: read, compare and write are one step.
                row = self._db.execute(
                    "SELECT version, created_at, updated_at FROM sessions WHERE id = ?",
                    (session_id,),
                ).fetchone()
                if row is None:
                    raise SessionNotFound(session_id)
                # The old snapshot is not read: put checks the version and times only.
                current = record_from(session_id, row[0], "", row[1], row[2])
                now = self.clock()
                if self.is_expired(current.updated_at, now):
                    self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                    refusal = SessionExpired(session_id, self.expire_after)
                elif current.version != expected_version:
                    raise SessionConflict(session_id, expected_version, current.version)
                else:
                    cursor = self._db.execute(
                        "UPDATE sessions SET version = ?, snapshot = ?, updated_at = ? "
                        "WHERE id = ? AND version = ?",
                        (expected_version + 1, snapshot, now, session_id, expected_version),
                    )
                    if cursor.rowcount != 1:  # cannot happen under the write lock; never guess
                        raise SessionConflict(session_id, expected_version, None)
            if refusal is not None:
                raise refusal  # after COMMIT: the expired session is removed
            return StoredSession(
                session_id, expected_version + 1, snapshot, current.created_at, now
            )

    def delete(self, session_id: str) -> None:
        self.checked_id(session_id)
        with self._guard(), self._transaction():
            cursor = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            if cursor.rowcount == 0:
                raise SessionNotFound(session_id)

    def list(self) -> list[str]:
        with self._guard():
            rows = self._db.execute(
                "SELECT id, version, updated_at FROM sessions ORDER BY id"
            ).fetchall()
            now = self.clock()
            ids: list[str] = []
            for session_id, version, updated_at in rows:
                if (
                    type(updated_at) in (int, float)
                    and type(version) is int
                    and self.is_expired(updated_at, now)
                ):
                    with self._transaction():
                        self._db.execute(
                            "DELETE FROM sessions WHERE id = ? AND version = ?",
                            (session_id, version),
                        )
                    continue
                ids.append(str(session_id))
            return ids

    # -- plumbing ------------------------------------------------------------------------------

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """One operation at a time on this connection; backend failures as StoreUnavailable."""
        with self._lock:
            try:
                yield
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.IntegrityError):
                    raise
                raise StoreUnavailable(
                    f"the session store {str(self.path)!r} failed: {exc}"
                ) from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` (the write lock, waiting up to ``timeout``) ... COMMIT/ROLLBACK."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
