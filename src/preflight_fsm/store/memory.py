"""An in-process session store, for tests and for embedding in one long-running process."""

from __future__ import annotations

import dataclasses
import threading
import time

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
)
from preflight_fsm.store.schemes import register_store

__all__ = ["MemoryStore"]


class MemoryStore(SessionStore):
    """Sessions in a dict guarded by a lock: safe across threads, gone with the process."""

    def __init__(self, *, expire_after: float = DEFAULT_EXPIRE_AFTER, clock: Clock = time.time):
        super().__init__(expire_after=expire_after, clock=clock)
        self._sessions: dict[str, StoredSession] = {}
        self._lock = threading.Lock()

    @classmethod
    def at(
        cls, location: str, *, expire_after: float, clock: Clock, create: bool = True
    ) -> MemoryStore:
        """A new, empty store for the location ``memory:`` (nothing else is one)."""
        if location != "memory:":
            raise StoreUnavailable(f"{location!r} is no store: write memory: alone")
        return cls(expire_after=expire_after, clock=clock)

    @property
    def location(self) -> str:
        return "memory:"

    def get(self, session_id: str) -> StoredSession:
        self.checked_id(session_id)
        with self._lock:
            return self._live(session_id)

    def create(
        self, session_id: str, snapshot: str, *, expire_after: float | None = None, flow: str = ""
    ) -> StoredSession:
        self.new_id_checked(session_id)
        self.checked_snapshot(snapshot)
        expiry, flow = self.expiry_for(expire_after), self.checked_flow(flow)
        with self._lock:
            if session_id in self._sessions:
                raise SessionConflict(session_id, None, None)
            now = self.clock()
            if self.reclaim_due(now):
                self._reclaim(RECLAIM_BATCH)
            record = StoredSession(session_id, 1, snapshot, now, now, expiry, flow)
            self._sessions[session_id] = record
            return record

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        self.checked_id(session_id)
        self.checked_snapshot(snapshot)
        moved = None if flow is None else self.checked_flow(flow)
        with self._lock:
            current = self._live(session_id)
            if current.version != expected_version:
                raise SessionConflict(session_id, expected_version, current.version)
            record = dataclasses.replace(
                current,
                version=current.version + 1,
                snapshot=snapshot,
                updated_at=self.clock(),
                flow=current.flow if moved is None else moved,
            )
            self._sessions[session_id] = record
            return record

    def delete(self, session_id: str) -> None:
        self.checked_id(session_id)
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise SessionNotFound(session_id)

    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        with self._lock:
            now = self.clock()
            return [
                SessionEntry(r.id, r.version, r.created_at, r.updated_at, r.expire_after, r.flow)
                for _, r in sorted(self._sessions.items())
                if not self.is_expired(r.updated_at, now, r.expire_after)
                and (flow is None or r.flow == flow)
            ]

    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        with self._lock:
            return self._reclaim(limit)

    def _reclaim(self, limit: int) -> int:
        now = self.clock()
        expired = [
            r.id
            for r in self._sessions.values()
            if self.is_expired(r.updated_at, now, r.expire_after)
        ]
        for session_id in expired[:limit]:
            del self._sessions[session_id]
        return min(len(expired), limit)

    def _live(self, session_id: str) -> StoredSession:
        record = self._sessions.get(session_id)
        if record is None:
            raise SessionNotFound(session_id)
        if self.is_expired(record.updated_at, expire_after=record.expire_after):
            del self._sessions[session_id]
            raise SessionExpired(session_id, record.expire_after)
        return record


register_store(("memory:",), "memory: (this process only)", MemoryStore.at)
