"""A PostgreSQL store, for teams that keep their data in PostgreSQL (extra ``postgres``).

Sessions are rows of one table, ``preflight_fsm_sessions`` (made at first open, under an advisory
lock so servers starting together make it once), reached through a psycopg 3 connection pool.
Every write is one statement or one transaction: ``put`` is ``UPDATE ... WHERE id = %s AND
version = %s``, so of two writers that read one version, PostgreSQL's row lock lets exactly one
match and the other finds the version moved on (SessionConflict, nothing written), whatever the
number of processes and hosts. A server killed mid-write (``kill -9``) leaves its transaction
uncommitted: PostgreSQL rolls it back and the previous version stands.

Expiry follows the store's clock and each session's own ``expire_after``, like every backend;
each create also removes up to :data:`~preflight_fsm.store.base.RECLAIM_BATCH` expired sessions
(by an index on the expiry, skipping rows another writer holds). Durability is the server's:
:meth:`PostgresStore.durability_warning` names a server running with ``fsync`` or
``synchronous_commit`` off. The URL's password never appears in any message
(``store/secrets.py``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    RECLAIM_BATCH,
    Clock,
    SessionEntry,
    SessionStore,
    StoredSession,
    entry_from,
    record_from,
)
from preflight_fsm.store.schemes import register_store
from preflight_fsm.store.secrets import redacted, secrets_of

if TYPE_CHECKING:
    import psycopg_pool

__all__ = ["TABLE", "PostgresStore"]

TABLE: Final = "preflight_fsm_sessions"
"""The table every PostgresStore keeps its sessions in."""

_SCHEMA: Final = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    expire_after DOUBLE PRECISION NOT NULL,
    flow TEXT NOT NULL,
    expires_at DOUBLE PRECISION GENERATED ALWAYS AS (updated_at + expire_after) STORED
);
CREATE INDEX IF NOT EXISTS {TABLE}_by_flow ON {TABLE} (flow);
CREATE INDEX IF NOT EXISTS {TABLE}_by_expiry ON {TABLE} (expires_at)
"""
# pg_advisory_xact_lock's key for making the table: "PFSM" as a number, like SQLite's mark.
_SCHEMA_LOCK: Final = 0x5046534D
_META: Final = "version, created_at, updated_at, expire_after, flow"
# The index narrows, then the same arithmetic as SessionStore.is_expired decides.
_RECLAIM: Final = f"""
DELETE FROM {TABLE} WHERE id IN (
    SELECT id FROM {TABLE} WHERE expires_at <= %(now)s AND %(now)s - updated_at >= expire_after
    ORDER BY expires_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
"""


class PostgresStore(SessionStore):
    """Sessions in PostgreSQL at ``url`` (``postgresql://user:password@host:port/dbname``),
    shared by any number of processes and hosts.

    ``pool_size`` is the most connections this store holds (threads of one server share them);
    ``timeout`` bounds connecting and waiting for a free connection. Needs the ``postgres`` extra
    (``pip install 'preflight-fsm[postgres]'``).
    """

    def __init__(
        self,
        url: str,
        *,
        expire_after: float = DEFAULT_EXPIRE_AFTER,
        clock: Clock = time.time,
        pool_size: int = 8,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(expire_after=expire_after, clock=clock)
        self.url = url
        self.location_shown = redacted(url)
        try:
            import psycopg
            import psycopg_pool
        except ImportError:
            from preflight_fsm.extras import install_hint

            raise StoreUnavailable(
                f"the session store {self.location_shown!r} needs the psycopg and psycopg-pool "
                f"packages; install them with: {install_hint('postgres')}"
            ) from None
        self._psycopg = psycopg
        self._pool_errors = (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed)
        self._pool: psycopg_pool.ConnectionPool[Any] | None = None
        connect_timeout = max(1, round(timeout))
        with self._guard(None):
            # One connection first: a refused login or a server down is said at once, in the
            # server's words (the pool would retry until its timeout, then say only that).
            first = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout)
            with first as db, db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                db.execute(_SCHEMA)
            self._pool = psycopg_pool.ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, pool_size),
                timeout=timeout,
                kwargs={"autocommit": True, "connect_timeout": connect_timeout},
                open=False,
                name="preflight-fsm",
            )
            self._pool.open(wait=True, timeout=timeout)

    @classmethod
    def at(cls, location: str, *, expire_after: float, clock: Clock, create: bool) -> PostgresStore:
        """The store at a ``postgresql://`` or ``postgres://`` URL (its table is made at first
        open whatever ``create`` says: an empty table is no session)."""
        return cls(location, expire_after=expire_after, clock=clock)

    @property
    def location(self) -> str:
        """The URL with its password replaced by ``***``: safe to print."""
        return self.location_shown

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    # -- the interface -------------------------------------------------------------------------

    def get(self, session_id: str) -> StoredSession:
        self.checked_id(session_id)
        with self._connection(session_id) as db:
            row = db.execute(
                f"SELECT snapshot, {_META} FROM {TABLE} WHERE id = %s", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            record = record_from(session_id, row[1], row[0], *row[2:])
            if self.is_expired(record.updated_at, expire_after=record.expire_after):
                # Only the version read is removed: a write that just came first stays.
                db.execute(
                    f"DELETE FROM {TABLE} WHERE id = %s AND version = %s",
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
        now = self.clock()
        with self._connection(session_id) as db, db.transaction():
            db.execute(_RECLAIM, {"now": now, "limit": RECLAIM_BATCH})
            made = db.execute(
                f"INSERT INTO {TABLE} (id, snapshot, {_META}) VALUES (%s, %s, 1, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO NOTHING",
                (session_id, snapshot, now, now, expiry, flow),
            ).rowcount
        if made != 1:
            raise SessionConflict(session_id, None, None)
        return StoredSession(session_id, 1, snapshot, now, now, expiry, flow)

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        self.checked_id(session_id)
        self.checked_snapshot(snapshot)
        moved = None if flow is None else self.checked_flow(flow)
        now = self.clock()
        with self._connection(session_id) as db:
            # One statement: the row lock makes read, compare and write one step.
            row = db.execute(
                f"UPDATE {TABLE} SET version = version + 1, snapshot = %s, updated_at = %s, "
                "flow = COALESCE(%s, flow) "
                "WHERE id = %s AND version = %s AND %s - updated_at < expire_after "
                "RETURNING created_at, expire_after, flow",
                (snapshot, now, moved, session_id, expected_version, now),
            ).fetchone()
            if row is not None:
                created_at, expiry, stored_flow = row
                return StoredSession(
                    session_id, expected_version + 1, snapshot, created_at, now, expiry, stored_flow
                )
            # Why not: the session as it stands now (its snapshot is not read).
            found = db.execute(f"SELECT {_META} FROM {TABLE} WHERE id = %s", (session_id,))
            current = found.fetchone()
            if current is None:
                raise SessionNotFound(session_id)
            entry = entry_from(session_id, *current)
            if self.is_expired(entry.updated_at, now, entry.expire_after):
                db.execute(
                    f"DELETE FROM {TABLE} WHERE id = %s AND version = %s",
                    (session_id, entry.version),
                )
                raise SessionExpired(session_id, entry.expire_after)
            actual = entry.version if entry.version != expected_version else None
            raise SessionConflict(session_id, expected_version, actual)

    def delete(self, session_id: str) -> None:
        self.checked_id(session_id)
        with self._connection(session_id) as db:
            removed = db.execute(f"DELETE FROM {TABLE} WHERE id = %s", (session_id,)).rowcount
        if not removed:
            raise SessionNotFound(session_id)

    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        query = f"SELECT id, {_META} FROM {TABLE}"
        with self._connection(None) as db:
            rows = (
                db.execute(f"{query} WHERE flow = %s ORDER BY id", (flow,))
                if flow is not None
                else db.execute(f"{query} ORDER BY id")
            ).fetchall()
        return self.live_entries((session_id, meta) for session_id, *meta in rows)

    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        with self._connection(None) as db:
            return int(db.execute(_RECLAIM, {"now": self.clock(), "limit": limit}).rowcount)

    # -- optional capabilities -----------------------------------------------------------------

    def check(self) -> str | None:
        try:
            with self._connection(None) as db:
                db.execute("SELECT 1").fetchone()
        except StoreUnavailable as exc:
            return str(exc)
        return None

    def durability_warning(self) -> str | None:
        """Why committed steps could be lost if the PostgreSQL server crashed, or None."""
        with self._connection(None) as db:
            fsync = db.execute("SHOW fsync").fetchone()
            commit = db.execute("SHOW synchronous_commit").fetchone()
        off = [
            name
            for name, row in (("fsync", fsync), ("synchronous_commit", commit))
            if row is not None and str(row[0]).lower() == "off"
        ]
        if not off:
            return None
        return (
            f"the PostgreSQL server at {self.location_shown} runs with {' and '.join(off)} off: "
            "a crash of the server or the machine may lose the last steps; turn it on "
            "(docs/sessions.md)"
        )

    # -- plumbing ------------------------------------------------------------------------------

    @contextmanager
    def _connection(self, session_id: str | None) -> Iterator[Any]:
        """A pooled connection (autocommit: each statement its own transaction unless a block
        opens one), with the driver's failures as StoreUnavailable."""
        assert self._pool is not None  # __init__ raised otherwise
        with self._guard(session_id), self._pool.connection() as db:
            yield db

    @contextmanager
    def _guard(self, session_id: str | None) -> Iterator[None]:
        where = self.location_shown
        try:
            yield
        except self._psycopg.DataError as exc:
            if session_id is None:
                raise StoreUnavailable(
                    f"the session store {where!r} failed: {self._hidden(exc)}"
                ) from None
            raise CorruptSession(session_id, self._hidden(exc)) from None
        except self._psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"cannot reach the session store {where!r}: {self._hidden(exc)}"
            ) from None
        except self._pool_errors as exc:
            raise StoreUnavailable(
                f"the session store {where!r} failed: {self._hidden(exc)}"
            ) from None

    def _hidden(self, exc: BaseException) -> str:
        """What the driver said, on one line, without the URL or its secrets."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        text = text.replace(self.url, self.location_shown)
        for secret in secrets_of(self.url):
            text = text.replace(secret, "***")
        return text


register_store(
    ("postgresql://", "postgres://"),
    "a postgresql:// or postgres:// URL",
    PostgresStore.at,
    shown=redacted,
)
