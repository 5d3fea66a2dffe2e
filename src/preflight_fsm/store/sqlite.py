"""The embedded default store: one SQLite database (stdlib ``sqlite3``) in WAL mode.

Several processes may share it. Every write is one ``BEGIN IMMEDIATE`` transaction, so the
compare-and-set on the version (``UPDATE ... WHERE id = ? AND version = ?``) cannot interleave
with another writer, and a process killed mid-write leaves the previous version intact: SQLite's
journal rolls the torn transaction back when the file is next opened.

Reads never wait behind writes (D-SQLITE-READS): they run on a connection of their own, under a
lock of their own, so a write waiting for another process's write lock (WAL lets readers through
it) blocks no reader. A write that cannot get the lock within ``timeout`` is reported busy to its
caller alone, with what to do. Under ``without_waiting`` a call that would wait (for this
process's other writer or reader, or another process's write lock) raises ``StoreWouldWait`` at
once, having changed nothing.

The database is the file and, while a process has it open, its ``-wal`` and ``-shm`` files beside
it: committed steps may live in ``-wal`` until the last connection closes (which folds them into
the file). A file is used only if it is this project's store (its ``application_id`` says so); a
new one is created only when asked (``create=True``), complete, and under its final name in one
atomic step, so no reader ever sees a half-made store and no foreign file is ever adopted.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Final, Literal

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.store import wal as _wal
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    RECLAIM_BATCH,
    Clock,
    SessionEntry,
    SessionStore,
    StoredSession,
    StoreWouldWait,
    entry_from,
    may_wait,
    not_waiting,
    record_from,
)
from preflight_fsm.store.schemes import register_store
from preflight_fsm.store.sqlite_layout import (
    APPLICATION_ID,
    RECLAIM,
    SCHEMA,
    SCHEMA_VERSION,
    create_store,
    layout_problem,
    use_wal,
)

__all__ = ["APPLICATION_ID", "SCHEMA", "SCHEMA_VERSION", "SqliteStore"]

DEFAULT_WRITE_WAIT: Final = 5.0
"""Seconds a write waits for the write lock before it is refused as busy (was 30: a client's
timeout is often 15)."""

_META = "version, created_at, updated_at, expire_after, flow"
_ACCEPTED = (
    "name a new file (the first `start` creates it) or an existing preflight-fsm session store"
)


class SqliteStore(SessionStore):
    """Sessions in one SQLite database; safe across threads and processes sharing the file.

    ``create`` makes the store when ``path`` does not exist yet (creating its directory too);
    without it a missing store reads as empty and nothing is created, which is what read-only
    commands want. ``timeout`` bounds how long a write waits for the write lock (this process's
    other writers and another process's), then the write is refused as busy; reads never wait.
    ``synchronous`` is SQLite's setting for WAL mode: ``"NORMAL"`` (the default) keeps every
    committed step through any process crash and never corrupts the file, but a power cut may lose
    the last steps; ``"FULL"`` also survives power cuts, at an fsync per step (about a third of
    the throughput).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        expire_after: float = DEFAULT_EXPIRE_AFTER,
        clock: Clock = time.time,
        timeout: float = DEFAULT_WRITE_WAIT,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        create: bool = True,
    ) -> None:
        super().__init__(expire_after=expire_after, clock=clock)
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', not {synchronous!r}")
        self.synchronous = synchronous
        self.path = Path(path)
        self._timeout = timeout
        self._lock = threading.Lock()  # the writing connection: one write at a time
        self._read_lock = threading.Lock()  # the reading connection: never held by a writer
        self._db: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._writer_waits = True  # whether the writing connection's busy timeout is `timeout`
        self._stateful = False  # whether the file has the store_state table (older ones do not)
        try:
            if self.path.is_dir():
                self._refuse("is a directory")
            if not self.path.exists():
                _wal.refuse_orphaned_wal(self.path)
                if not create:
                    return  # read as an empty store; nothing is created
                create_store(self.path)
            self._check_header()
            # Looked at before connecting: the connection's first read creates a -wal file.
            wal_found = _wal.has_content(_wal.wal_of(self.path))
            self._db = self._connect()
            stat = os.stat(self.path)
            self._identity = (stat.st_dev, stat.st_ino)
            self._setup()
            self._stateful = _wal.has_state_table(self._db)
            if self._stateful and not wal_found:
                _wal.refuse_copy_without_wal(self._db, self.path, self._identity)
            self._reader = self._connect()
        except BaseException as exc:
            for db in (self._db, self._reader):
                if db is not None:
                    db.close()
            self._db = self._reader = None
            if not isinstance(exc, OSError | sqlite3.Error | UnicodeError):
                raise
            raise StoreUnavailable(
                f"cannot use the session store {str(self.path.absolute())!r}: {_reason(exc)}"
            ) from None

    # -- opening -------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            f"{self.path.resolve().as_uri()}?mode=rw",
            uri=True,
            timeout=self._timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        # Bytes, decoded here: undecodable text in a row or the schema is reported, not raised.
        db.text_factory = bytes
        return db

    def _refuse(self, why: str) -> None:
        raise StoreUnavailable(
            f"{str(self.path.absolute())!r} {why}, not a preflight-fsm session store; {_ACCEPTED}"
        )

    def _check_header(self) -> None:
        """An empty file is refused by its size; any other header is read by SQLite itself
        (``_setup``). Opening and closing the file here would release every SQLite lock this
        process holds on it (POSIX locks belong to the process, not the descriptor): with
        another store open on it here, another process's last connection closing would then
        delete the -wal under that store, losing its steps (SQLite's "How To Corrupt", 2.2)."""
        if os.stat(self.path).st_size == 0:
            self._refuse("is an empty file")

    def _setup(self) -> None:
        db = self._require()
        problem = layout_problem(db)
        if problem is not None:
            self._refuse(problem)
        use_wal(db, self.synchronous)

    @classmethod
    def at(cls, location: str, *, expire_after: float, clock: Clock, create: bool) -> SqliteStore:
        """The store a ``sqlite:///absolute/path`` location names."""
        path = location.removeprefix("sqlite://")
        if not path.startswith("/"):
            raise StoreUnavailable(
                f"{location} names no absolute path: write sqlite:///absolute/path, "
                "or the path alone"
            )
        return cls(path, expire_after=expire_after, clock=clock, create=create)

    @property
    def location(self) -> str:
        return str(self.path)

    @property
    def exists(self) -> bool:
        """False when the store was opened without ``create`` and there is none yet."""
        return self._db is not None

    def backup(self, destination: str | Path) -> None:
        """Copy the store, every committed step included, to ``destination`` (a new file), as a
        store that opens alone: the copy a running store allows (``store/wal.py``)."""
        target = Path(destination)
        if target.exists():
            raise StoreUnavailable(f"{str(target)!r} exists; name a new file for the backup")
        with self._reading() as db:
            copy = sqlite3.connect(target, isolation_level=None)
            try:
                db.backup(copy)
                _wal.mark_copy_complete(copy)
            finally:
                copy.close()

    def without_waiting(self) -> AbstractContextManager[None]:
        return not_waiting()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._wait_for_the_write_lock(True)
                # Best effort (a closed or replaced store, a busy one): the mark then stays, and
                # only a copy made without the -wal is refused for it. A store not marked (a
                # process that only read it) is left untouched: closing writes nothing.
                with contextlib.suppress(sqlite3.Error, OSError, StoreUnavailable):
                    db, identity = self._db, self._identity
                    if self._stateful and not db.in_transaction and identity is not None:
                        self._check_identity()
                        if _wal.in_use(db, identity):
                            _wal.mark_not_in_use(db, self._transaction)
                self._db.close()
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()

    # -- the interface -------------------------------------------------------------------------

    def get(self, session_id: str) -> StoredSession:
        self.checked_id(session_id)
        if self._db is None:
            raise SessionNotFound(session_id)
        with self._reading() as reader:
            row = reader.execute(
                f"SELECT id, snapshot, {_META} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        with self._failures():
            if row is None:
                raise SessionNotFound(session_id)
            if _text(row[0]) != session_id:  # a corrupted index answered for another row
                raise CorruptSession(session_id, f"the store returned the row of {row[0]!r}")
            version, created_at, updated_at, expire_after, flow = row[2:]
            record = record_from(
                session_id, version, row[1], created_at, updated_at, expire_after, flow
            )
            if self.is_expired(record.updated_at, expire_after=record.expire_after):
                # Only the version read is removed: a write that just came first stays. A busy
                # store leaves the row to the next read or reclaim: the read still answers.
                busy = (StoreUnavailable, StoreWouldWait)
                with contextlib.suppress(*busy), self._guard(), self._write():
                    self._require().execute(
                        "DELETE FROM sessions WHERE id = ? AND version = ?",
                        (session_id, record.version),
                    )
                raise SessionExpired(session_id, record.expire_after)
            return record

    def create(
        self, session_id: str, snapshot: str, *, expire_after: float | None = None, flow: str = ""
    ) -> StoredSession:
        self.new_id_checked(session_id)
        self.checked_snapshot(snapshot)
        expiry, flow = self.expiry_for(expire_after), self.checked_flow(flow)
        if self._db is None:
            raise StoreUnavailable(
                f"there is no session store at {str(self.path)!r} and it was opened without "
                "create=True; nothing was written"
            )
        with self._guard():
            db = self._require()
            now = self.clock()
            try:
                with self._write():
                    if self.reclaim_due(now):
                        db.execute(RECLAIM, (now, RECLAIM_BATCH))
                    db.execute(
                        f"INSERT INTO sessions (id, snapshot, {_META}) "
                        "VALUES (?, ?, 1, ?, ?, ?, ?)",
                        (session_id, snapshot, now, now, expiry, flow),
                    )
            except sqlite3.IntegrityError:
                raise SessionConflict(session_id, None, None) from None
            return StoredSession(session_id, 1, snapshot, now, now, expiry, flow)

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        self.checked_id(session_id)
        self.checked_snapshot(snapshot)
        moved = None if flow is None else self.checked_flow(flow)
        if self._db is None:
            raise SessionNotFound(session_id)
        with self._guard():
            db = self._require()
            refusal: Exception | None = None
            with self._write():
                # The write lock is held from here to COMMIT: read, compare and write are one step.
                row = db.execute(
                    f"SELECT id, {_META} FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if row is None:
                    raise SessionNotFound(session_id)
                if _text(row[0]) != session_id:
                    raise CorruptSession(session_id, f"the store returned the row of {row[0]!r}")
                # The old snapshot is not read: put checks the version and times only.
                current = entry_from(session_id, *row[1:])
                now = self.clock()
                if self.is_expired(current.updated_at, now, current.expire_after):
                    db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                    refusal = SessionExpired(session_id, current.expire_after)
                elif current.version != expected_version:
                    raise SessionConflict(session_id, expected_version, current.version)
                else:
                    cursor = db.execute(
                        "UPDATE sessions SET version = ?, snapshot = ?, updated_at = ?, "
                        "flow = COALESCE(?, flow) WHERE id = ? AND version = ?",
                        (expected_version + 1, snapshot, now, moved, session_id, expected_version),
                    )
                    if cursor.rowcount != 1:  # cannot happen under the write lock; never guess
                        raise SessionConflict(session_id, expected_version, None)
            if refusal is not None:
                raise refusal  # after COMMIT: the expired session is removed
            return StoredSession(
                session_id,
                expected_version + 1,
                snapshot,
                current.created_at,
                now,
                current.expire_after,
                current.flow if moved is None else moved,
            )

    def delete(self, session_id: str) -> None:
        self.checked_id(session_id)
        if self._db is None:
            raise SessionNotFound(session_id)
        with self._guard():
            db = self._require()
            with self._write():
                cursor = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                if cursor.rowcount == 0:
                    raise SessionNotFound(session_id)

    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        if self._db is None:
            return 0
        with self._guard(), self._write():
            return int(self._require().execute(RECLAIM, (self.clock(), limit)).rowcount)

    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        if self._db is None:
            return []
        with self._reading() as db:
            query = f"SELECT id, {_META} FROM sessions"
            rows = (
                db.execute(f"{query} WHERE flow = ? ORDER BY id", (flow,))
                if flow is not None
                else db.execute(f"{query} ORDER BY id")
            ).fetchall()
            return self.live_entries((_text(raw_id, "replace"), meta) for raw_id, *meta in rows)

    # -- plumbing ------------------------------------------------------------------------------

    def _require(self) -> sqlite3.Connection:
        assert self._db is not None  # every caller checked that the store exists
        return self._db

    def _check_identity(self) -> None:
        """Refuse to write when the file was removed or replaced since it was opened: the write
        would land in a file nobody will ever open again, and the step would be lost unseen."""
        try:
            stat = os.stat(self.path)
            same = (stat.st_dev, stat.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            raise StoreUnavailable(
                f"the session store {str(self.path)!r} was removed or replaced while this process "
                "had it open; nothing was written"
            )

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """One write at a time on the writing connection, waiting at most ``timeout`` for this
        process's other writers; backend failures as StoreUnavailable."""
        waits = may_wait()
        with self._failures():
            if not self._lock.acquire(timeout=self._timeout if waits else 0):
                raise sqlite3.OperationalError("database is locked")
            try:
                self._wait_for_the_write_lock(waits)
                yield
            finally:
                self._lock.release()

    def _wait_for_the_write_lock(self, waits: bool) -> None:
        """Under ``_lock``: the writing connection waits ``timeout`` for SQLite's write lock, or
        not at all (set only when it changes: a PRAGMA costs more than a read)."""
        if waits != self._writer_waits:
            milliseconds = round(self._timeout * 1000) if waits else 0
            self._require().execute(f"PRAGMA busy_timeout = {milliseconds}")
            self._writer_waits = waits

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The reading connection, never held by a writer: WAL lets it read past any write lock."""
        with self._failures():
            if not self._read_lock.acquire(blocking=may_wait()):
                raise StoreWouldWait("another thread is reading")
            try:
                assert self._reader is not None  # every caller checked that the store exists
                yield self._reader
            finally:
                self._read_lock.release()

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """Backend failures as StoreUnavailable; a write lock not had in time as busy."""
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeError) as exc:
            if isinstance(exc, sqlite3.IntegrityError):
                raise
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                if not may_wait():
                    raise StoreWouldWait(str(exc)) from None
                raise StoreUnavailable(
                    f"the session store {str(self.path)!r} is busy: another writer held its "
                    f"write lock for more than {self._timeout:g} s; nothing was written; retry "
                    "the step (if it stays busy, find the process holding the store open)"
                ) from None
            raise StoreUnavailable(
                f"the session store {str(self.path)!r} failed: {_reason(exc)}"
            ) from None

    def _write(self) -> AbstractContextManager[None]:
        """The transaction of a write of session rows: refused if the file was replaced, begun
        only once the file says it is in use (``store/wal.py``)."""
        self._check_identity()
        return self._transaction(marked=True)

    @contextmanager
    def _transaction(self, *, marked: bool = False) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` (the write lock, waiting up to ``timeout``) ... COMMIT/ROLLBACK.

        ``marked``: the file is marked in use first, checked under the write lock so that no
        process's clean close slips between the check and the rows this transaction adds.
        """
        db = self._require()
        db.execute("BEGIN IMMEDIATE")
        if marked:
            self._until_marked(db)
        try:
            yield
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _until_marked(self, db: sqlite3.Connection) -> None:
        """Within a transaction: mark the file in use unless it is (rolled back and begun again)."""
        assert self._identity is not None  # an open store knows its file
        for _ in range(5):  # then write under the last marking: others unmark it as fast
            if self._stateful and _wal.in_use(db, self._identity):
                return
            db.execute("ROLLBACK")
            _wal.mark_in_use(db, self._identity, self._transaction, create=not self._stateful)
            self._stateful = True
            db.execute("BEGIN IMMEDIATE")


def _text(value: object, errors: str = "strict") -> str:
    """A value read with ``text_factory=bytes`` as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors)
    return str(value)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, UnicodeError):
        return "it holds text that is not UTF-8 (a damaged file)"
    return str(exc)


register_store(("sqlite://",), "sqlite:///absolute/path", SqliteStore.at)
