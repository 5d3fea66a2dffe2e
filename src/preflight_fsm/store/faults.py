"""A store wrapper and a clock that inject the faults a real deployment sees, from a seed.

:class:`FaultyStore` wraps any :class:`~preflight_fsm.store.base.SessionStore` and, drawing from
its own seeded random generator, makes some calls fail the way SQLite and Redis fail:

- ``busy`` and ``disk`` (SQLite's "database is locked", "disk I/O error"): StoreUnavailable
  before the call reaches the store, so nothing is written;
- ``lost_reply`` (Redis disconnecting mid-script): the write is applied, then the reply is lost
  and the caller sees StoreUnavailable; it cannot know whether its step was stored;
- ``expiry`` (a pause between a read and the write that follows it): the clock jumps past the
  session's expiry just before a ``put``, which then finds the session expired;
- ``lock_holder`` (another process in a long write transaction), SQLite stores only: a second
  connection holds ``BEGIN EXCLUSIVE`` during the call. Nothing is faked: a write is refused
  busy by the store itself; a read must answer (one that fails is a RuntimeError, a failure).

:class:`SimClock` is the clock both the wrapped store and the faults read; time moves only when
told. Same seed, same calls: same faults, in the same places (``log`` lists them). The
simulator that drives sessions through it is ``tests/sim.py`` (``make sim``). It lives in the
package, not the tests, so that a deployment can run its own store and workers through it.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from preflight_fsm.errors import CorruptSession, StoreUnavailable
from preflight_fsm.store.base import RECLAIM_BATCH, SessionEntry, SessionStore, StoredSession
from preflight_fsm.store.sqlite import SqliteStore

__all__ = ["FAULTS", "FaultRates", "FaultyStore", "SimClock"]

FAULTS: Final = ("busy", "disk", "lost_reply", "expiry", "lock_holder")
"""The faults :class:`FaultyStore` injects (module docstring)."""

_MESSAGES: Final = {
    "busy": "database is locked",
    "disk": "disk I/O error",
    "lost_reply": "Connection closed by server (the command was sent; its reply was lost)",
}


class SimClock:
    """Seconds since the epoch that move only when told: :meth:`advance`."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (never back)."""
        if seconds < 0:
            raise ValueError(f"time only moves forward, not by {seconds}")
        self.now += seconds


@dataclass(frozen=True, slots=True)
class FaultRates:
    """The chance, per call, of each fault (0 to 1); all 0 is a faithful store."""

    busy: float = 0.0
    disk: float = 0.0
    lost_reply: float = 0.0
    expiry: float = 0.0
    lock_holder: float = 0.0

    def __post_init__(self) -> None:
        for name in FAULTS:
            rate = getattr(self, name)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"the rate of {name} must be between 0 and 1, not {rate}")


@dataclass
class FaultyStore(SessionStore):
    """``inner`` with faults injected at ``rates``, drawn from ``seed`` (module docstring).

    Its clock is ``clock``, which ``inner`` must read too (build ``inner`` with it).
    """

    inner: SessionStore
    clock: SimClock
    seed: int = 0
    rates: FaultRates = field(default_factory=FaultRates)
    log: list[str] = field(default_factory=list)
    """Every fault injected, in order: ``"<fault> <operation> <session id>"``."""

    def __post_init__(self) -> None:
        super().__init__(expire_after=self.inner.expire_after, clock=self.clock)
        self._random = random.Random(self.seed)
        self._expiries: dict[str, float] = {}

    @property
    def location(self) -> str:
        return self.inner.location

    def close(self) -> None:
        self.inner.close()

    def get(self, session_id: str) -> StoredSession:
        self._before("get", session_id)
        with self._held("get", session_id, reading=True):
            record = self.inner.get(session_id)
        self._expiries[session_id] = record.expire_after
        return record

    def create(
        self, session_id: str, snapshot: str, *, expire_after: float | None = None, flow: str = ""
    ) -> StoredSession:
        self._before("create", session_id)
        with self._held("create", session_id):
            record = self.inner.create(session_id, snapshot, expire_after=expire_after, flow=flow)
        self._expiries[session_id] = record.expire_after
        self._after("create", session_id)
        return record

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        self._before("put", session_id)
        if self._draw("expiry"):
            self.log.append(f"expiry put {session_id}")
            self.clock.advance(self._expiries.get(session_id, self.expire_after))
        with self._held("put", session_id):
            record = self.inner.put(session_id, snapshot, expected_version, flow=flow)
        self._after("put", session_id)
        return record

    def delete(self, session_id: str) -> None:
        self._before("delete", session_id)
        self.inner.delete(session_id)
        self._after("delete", session_id)

    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        self._before("entries", None)
        with self._held("entries", None, reading=True):
            return self.inner.entries(flow=flow)

    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        self._before("reclaim", None)
        return self.inner.reclaim(limit)

    def check(self) -> str | None:
        return self.inner.check()

    # -- the faults ------------------------------------------------------------------------------

    def _draw(self, fault: str) -> bool:
        rate: float = getattr(self.rates, fault)
        return rate > 0 and self._random.random() < rate

    def _before(self, operation: str, session_id: str | None) -> None:
        for fault in ("busy", "disk"):
            if self._draw(fault):
                self._fail(fault, operation, session_id)

    @contextmanager
    def _held(
        self, operation: str, session_id: str | None, *, reading: bool = False
    ) -> Iterator[None]:
        """The call, with another connection holding the write lock if ``lock_holder`` is drawn
        and the store is a SQLite file."""
        if not self._draw("lock_holder") or not isinstance(self.inner, SqliteStore):
            yield
            return
        self.log.append(f"lock_holder {operation} {session_id or '-'}")
        holder = sqlite3.connect(self.inner.path, isolation_level=None, timeout=0)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            try:
                yield
            except StoreUnavailable as exc:
                if reading:
                    raise RuntimeError(f"a read waited behind a held write lock: {exc}") from None
                raise
            finally:
                holder.execute("ROLLBACK")
        finally:
            holder.close()

    def _after(self, operation: str, session_id: str) -> None:
        if self._draw("lost_reply"):
            self._fail("lost_reply", operation, session_id)

    def _fail(self, fault: str, operation: str, session_id: str | None) -> None:
        self.log.append(f"{fault} {operation} {session_id or '-'}")
        raise StoreUnavailable(
            f"the session store {self.location!r} failed: {_MESSAGES[fault]}",
            session_id=session_id,
        )

    @classmethod
    def rates_from(cls, values: Mapping[str, float]) -> FaultRates:
        """FaultRates from a mapping of fault names (unknown names refused, naming them)."""
        unknown = sorted(set(values) - set(FAULTS))
        if unknown:
            raise ValueError(f"unknown faults: {', '.join(unknown)}; known: {', '.join(FAULTS)}")
        return FaultRates(**values)
