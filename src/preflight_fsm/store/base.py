"""The session store interface: snapshot JSON keyed by session id, written by compare-and-set.

Every backend (memory, SQLite, Redis, PostgreSQL, a third party's) implements :class:`SessionStore`
and passes one conformance suite (``preflight_fsm.store.testing``). A store never parses snapshots:
it keeps the text it is given with a version that grows by one on every write. Expiry is the
store's job because every backend must agree on it. Each session keeps the expiry it was created
with (``create(..., expire_after=)``, else the store's default) and the fingerprint of the flow it
runs on, beside its snapshot, so every later command honours them and ``entries(flow=...)`` finds a
flow's sessions without reading a snapshot (C10). A session whose last write is its
``expire_after`` seconds old is expired: reading or writing it raises :class:`SessionExpired` and
removes it; listing never removes anything; :meth:`SessionStore.reclaim` removes expired sessions
nobody reads again, a bounded batch at a time (every backend also reclaims on its own: on create,
at most once a second where that reads every row, or by a TTL).
"""

from __future__ import annotations

import builtins
import math
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Self

from preflight_fsm.errors import (
    CorruptSession,
    SessionNotFound,
    SessionStoreError,
    StoreUnavailable,
)

__all__ = [
    "DEFAULT_EXPIRE_AFTER",
    "RECLAIM_BATCH",
    "RECLAIM_EVERY",
    "SESSION_ID_PATTERN",
    "Clock",
    "SessionEntry",
    "SessionStore",
    "StoreWouldWait",
    "StoredSession",
    "may_wait",
    "not_waiting",
]

DEFAULT_EXPIRE_AFTER: Final = 30 * 60.0
"""Seconds without a step after which a session expires."""

SESSION_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""What a session id may look like: safe as a file name, a SQL value and a Redis key part."""

RECLAIM_BATCH: Final = 100
"""The most expired sessions one :meth:`SessionStore.reclaim` (and one create) removes."""

RECLAIM_EVERY: Final = 1.0
"""Seconds of the store's clock between two reclaims run by creates (:meth:`SessionStore.
reclaim_due`): a backend that finds expired sessions by reading every row pays that once a second,
not once a session (SQLite: 0.1 ms per create at 250 sessions, 2.3 ms at 4,000)."""

_PROBE_ID: Final = "preflight-fsm.health-check"
"""The id :meth:`SessionStore.check` reads by default: no session ever has it."""

_NOT_WAITING: ContextVar[bool] = ContextVar("store_not_waiting", default=False)

Clock = Callable[[], float]
"""Seconds since the epoch; ``time.time`` unless a test injects its own."""


class StoreWouldWait(Exception):
    """Raised only inside :meth:`SessionStore.without_waiting`: the call would have waited for a
    lock another thread or process holds, and stopped before changing anything. Whoever asked
    for no waiting catches it and makes the call again where waiting is harmless."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """One stored session: its snapshot JSON, its version, when it was created and last written,
    the seconds without a write after which it expires, and its flow's fingerprint."""

    id: str
    version: int
    snapshot: str
    created_at: float
    updated_at: float
    expire_after: float = DEFAULT_EXPIRE_AFTER
    flow: str = ""

    @property
    def expires_at(self) -> float:
        """When the session expires unless it is written again (seconds since the epoch)."""
        return self.updated_at + self.expire_after


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """What ``entries`` lists about a session without reading its snapshot (C10: by flow)."""

    id: str
    version: int
    created_at: float
    updated_at: float
    expire_after: float
    flow: str

    @property
    def expires_at(self) -> float:
        """When the session expires unless it is written again (seconds since the epoch)."""
        return self.updated_at + self.expire_after


class SessionStore(ABC):
    """Snapshot JSON keyed by session id, with a version that grows by one on every write.

    ``create`` writes version 1; ``put`` writes only when the stored version is the one the caller
    read (compare-and-set), else raises SessionConflict and writes nothing. Every method may raise
    StoreUnavailable when the backend cannot be reached.
    """

    def __init__(self, *, expire_after: float = DEFAULT_EXPIRE_AFTER, clock: Clock = time.time):
        self.expire_after = checked_expiry(expire_after)
        """The expiry of sessions created without one of their own."""
        self.clock = clock
        self._next_reclaim = -math.inf

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the sessions live, as ``--store`` would name it (a path or a URL)."""

    @abstractmethod
    def get(self, session_id: str) -> StoredSession:
        """The stored session; SessionNotFound, SessionExpired (and removed) or CorruptSession."""

    @abstractmethod
    def create(
        self, session_id: str, snapshot: str, *, expire_after: float | None = None, flow: str = ""
    ) -> StoredSession:
        """Store a new session at version 1; SessionConflict if the id is taken.

        ``expire_after`` (else the store's default) and ``flow`` (a flow fingerprint) stay with
        the session for its whole life.
        """

    @abstractmethod
    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        """Replace the snapshot if the stored version is ``expected_version``; the new version.

        ``flow`` (a fingerprint) moves the session to another flow (C10: a migration); None keeps
        the one it has.

        SessionConflict (nothing written) if another write came first; SessionNotFound,
        SessionExpired (and removed), or CorruptSession if the stored version or times are
        unreadable (the old snapshot is never read).
        """

    @abstractmethod
    def delete(self, session_id: str) -> None:
        """Remove the session, expired or corrupt ones too; SessionNotFound if there is none."""

    @abstractmethod
    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        """The live sessions' metadata (only those on ``flow`` when given), sorted by id, without
        reading a snapshot; a session whose metadata is unreadable as its CorruptSession."""

    def list(self) -> builtins.list[str]:
        """The ids of the live sessions, sorted; corrupt ones listed, expired ones left out
        (never removed: listing writes nothing)."""
        return [
            str(entry.session_id) if isinstance(entry, CorruptSession) else entry.id
            for entry in self.entries()
        ]

    @abstractmethod
    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        """Remove up to ``limit`` expired sessions (the oldest first where the backend can tell);
        how many were removed. Live sessions are never touched."""

    def close(self) -> None:  # noqa: B027 - optional hook: backends without resources keep it
        """Release the backend's connections; the store is unusable afterwards."""

    # -- optional capabilities: each default holds for a backend that says nothing more --------

    @property
    def exists(self) -> bool:
        """False when the store was opened without ``create`` and there is none yet."""
        return True

    def durability_warning(self) -> str | None:
        """Why sessions would not survive a restart of the backend's server, or None."""
        return None

    def eviction_policy(self) -> str | None:
        """The policy by which the backend deletes live sessions under memory pressure (Redis's
        ``maxmemory-policy``, any but ``noeviction``), or None: it never does."""
        return None

    def without_waiting(self) -> AbstractContextManager[None] | None:
        """A context in which this thread's calls on the store never wait: a call that would
        wait for a lock raises :class:`StoreWouldWait` at once, having changed nothing. None (the
        default) when the backend cannot promise it (a network round trip waits by nature); the
        MCP server then does its store work in a worker thread (``mcp/store_work.py``)."""
        return None

    def check(self) -> str | None:
        """None when the store answers; else a sentence naming the problem (``/healthz``, and a
        server's start). The default reads an id no session has, which every backend answers
        cheaply; a backend overrides it with its own ping."""
        try:
            self.get(_PROBE_ID)
        except StoreUnavailable as exc:
            return str(exc)
        except SessionStoreError:  # not found, expired, corrupt: the store answered
            return None
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- shared by the backends ---------------------------------------------------------------

    def is_expired(
        self, updated_at: float, now: float | None = None, expire_after: float | None = None
    ) -> bool:
        """True when ``updated_at`` is ``expire_after`` (the session's own, else the store's
        default) seconds or more before ``now``."""
        limit = self.expire_after if expire_after is None else expire_after
        return (self.clock() if now is None else now) - updated_at >= limit

    def reclaim_due(self, now: float) -> bool:
        """Whether a create at ``now`` runs a reclaim: the first create, then one
        :data:`RECLAIM_EVERY` seconds or more after the last that did (or a clock set back).
        Call it under the lock the create holds."""
        if self._next_reclaim - RECLAIM_EVERY <= now < self._next_reclaim:
            return False
        self._next_reclaim = now + RECLAIM_EVERY
        return True

    def expiry_for(self, expire_after: float | None) -> float:
        """A new session's expiry: ``expire_after`` checked, or the store's default."""
        return self.expire_after if expire_after is None else checked_expiry(expire_after)

    def live_entries(
        self, rows: Iterable[tuple[str, Sequence[object]]]
    ) -> builtins.list[SessionEntry | CorruptSession]:
        """``entries``' answer from ``(id, (version, created_at, updated_at, expire_after,
        flow))`` rows as a backend read them: the live ones, an unreadable one as its
        CorruptSession, the expired ones left out."""
        now = self.clock()
        found: builtins.list[SessionEntry | CorruptSession] = []
        for session_id, meta in rows:
            try:
                entry = entry_from(session_id, *meta)
            except CorruptSession as corrupt:
                found.append(corrupt)
                continue
            if not self.is_expired(entry.updated_at, now, entry.expire_after):
                found.append(entry)
        return found

    @staticmethod
    def checked_flow(flow: str) -> str:
        """``flow`` if it is a fingerprint's text (possibly empty: unknown)."""
        if not isinstance(flow, str) or len(flow) > 128 or not flow.isprintable():
            raise ValueError(f"not a flow fingerprint: {flow!r}")
        return flow

    @staticmethod
    def checked_id(session_id: str) -> str:
        """``session_id`` if it has the shape of one; else SessionNotFound (no such id exists)."""
        if not isinstance(session_id, str) or not SESSION_ID_PATTERN.fullmatch(session_id):
            raise SessionNotFound(str(session_id))
        return session_id

    @staticmethod
    def new_id_checked(session_id: str) -> str:
        """``session_id`` for a new session; ValueError if it has not the shape of one."""
        if not isinstance(session_id, str) or not SESSION_ID_PATTERN.fullmatch(session_id):
            raise ValueError(f"not a valid session id: {session_id!r}")
        return session_id

    @staticmethod
    def checked_snapshot(snapshot: str) -> str:
        """``snapshot`` if it is text; stores keep JSON text, never objects."""
        if not isinstance(snapshot, str):
            raise TypeError(f"a snapshot is stored as JSON text, not {type(snapshot).__name__}")
        return snapshot


@contextmanager
def not_waiting() -> Iterator[None]:
    """A backend's :meth:`SessionStore.without_waiting`: its calls then read :func:`may_wait`."""
    token = _NOT_WAITING.set(True)
    try:
        yield
    finally:
        _NOT_WAITING.reset(token)


def may_wait() -> bool:
    """False inside :func:`not_waiting` (this thread or task): raise StoreWouldWait instead."""
    return not _NOT_WAITING.get()


def checked_expiry(expire_after: float) -> float:
    """``expire_after`` as a float if a positive, finite number of seconds; else ValueError."""
    if isinstance(expire_after, bool) or not isinstance(expire_after, int | float):
        raise ValueError(f"expire_after must be a number of seconds, not {expire_after!r}")
    if not (math.isfinite(expire_after) and expire_after > 0):
        raise ValueError(f"expire_after must be a positive number of seconds: {expire_after}")
    return float(expire_after)


def record_from(
    session_id: str,
    version: object,
    snapshot: object,
    created_at: object,
    updated_at: object,
    expire_after: object = DEFAULT_EXPIRE_AFTER,
    flow: object = "",
) -> StoredSession:
    """A StoredSession from raw backend values, or CorruptSession naming what is wrong."""
    entry = entry_from(session_id, version, created_at, updated_at, expire_after, flow)
    if isinstance(snapshot, bytes | bytearray):
        try:
            snapshot = bytes(snapshot).decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptSession(session_id, "its snapshot is not UTF-8 text") from None
    if not isinstance(snapshot, str):
        raise CorruptSession(session_id, f"its snapshot is {type(snapshot).__name__}, not text")
    return StoredSession(
        session_id,
        entry.version,
        snapshot,
        entry.created_at,
        entry.updated_at,
        entry.expire_after,
        entry.flow,
    )


def entry_from(
    session_id: str,
    version: object,
    created_at: object,
    updated_at: object,
    expire_after: object,
    flow: object,
) -> SessionEntry:
    """A SessionEntry from raw backend values, or CorruptSession naming what is wrong."""
    if type(version) is not int or version < 1:
        raise CorruptSession(session_id, f"its version is {version!r}, not a positive integer")
    times: list[float] = []
    for name, value in (
        ("created_at", created_at),
        ("updated_at", updated_at),
        ("expire_after", expire_after),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CorruptSession(session_id, f"its {name} is {value!r}, not a number")
        if not math.isfinite(value) or (name == "expire_after" and value <= 0):
            raise CorruptSession(session_id, f"its {name} is {value!r}, not a usable number")
        times.append(float(value))
    if isinstance(flow, bytes | bytearray):
        flow = bytes(flow).decode("utf-8", "replace")
    if not isinstance(flow, str):
        raise CorruptSession(session_id, f"its flow is {flow!r}, not a fingerprint")
    return SessionEntry(session_id, version, times[0], times[1], times[2], flow)
