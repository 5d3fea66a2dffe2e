"""The store conformance suite: every backend, a third party's too, passes it as is.

A backend's tests subclass :class:`StoreConformance` (a store whose sessions live in the store
object) or :class:`DurableStoreConformance` (sessions that outlive it: a file, a server) and give
one pytest fixture, ``store_factory``: each call opens the backend on one location, empty at the
start of each test, with the clock and expiry given (docs/sessions.md, "How to add a store")::

    from preflight_fsm.store.testing import DurableStoreConformance

    class TestMyStore(DurableStoreConformance):
        @pytest.fixture
        def store_factory(self, tmp_path):
            return lambda *, clock, expire_after=DEFAULT_EXPIRE_AFTER: MyStore(
                tmp_path / "db", clock=clock, expire_after=expire_after)

Needs pytest (a test dependency, never imported by preflight-fsm itself). Time is a
:class:`~preflight_fsm.store.faults.SimClock`: no test sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import pytest

from preflight_fsm.errors import (
    PreflightFsmError,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    SessionStoreError,
)
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    Clock,
    SessionEntry,
    SessionStore,
    StoredSession,
)
from preflight_fsm.store.faults import SimClock

__all__ = ["DurableStoreConformance", "StoreConformance", "StoreFactory"]

MINUTE = 60.0


class StoreFactory(Protocol):
    """Opens the backend under test on the test's location (module docstring)."""

    def __call__(
        self, *, clock: Clock, expire_after: float = DEFAULT_EXPIRE_AFTER
    ) -> SessionStore: ...


class StoreConformance:
    """What every session store does (``SessionStore``'s contract), one behaviour per test."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        raise NotImplementedError(
            f"{type(self).__name__} must define the store_factory fixture (see "
            "preflight_fsm.store.testing)"
        )

    @pytest.fixture
    def clock(self) -> SimClock:
        return SimClock()

    @pytest.fixture
    def store(self, store_factory: StoreFactory, clock: SimClock) -> Iterator[SessionStore]:
        with store_factory(clock=clock) as opened:
            yield opened

    # -- create, get, put, delete, list ------------------------------------------------------------

    def test_create_stores_version_one(self, store: SessionStore, clock: SimClock) -> None:
        """A new session is stored at version 1 with the snapshot text exactly as given."""
        created = store.create("s1", '{"a": 1}')
        assert StoredSession("s1", 1, '{"a": 1}', clock.now, clock.now) == created
        assert created == store.get("s1")

    def test_put_with_the_read_version_writes_the_next_version(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """A put naming the stored version replaces the snapshot and bumps the version by one."""
        store.create("s1", "one")
        clock.advance(5)
        written = store.put("s1", "two", expected_version=1)
        assert (2, "two", clock.now) == (written.version, written.snapshot, written.updated_at)
        assert written == store.get("s1")

    def test_versions_grow_by_one_on_every_write(self, store: SessionStore) -> None:
        """Every successful write increases the version by exactly one."""
        store.create("s1", "v1")
        for version in range(1, 8):
            assert (
                version + 1 == store.put("s1", f"v{version + 1}", expected_version=version).version
            )
        assert ("v8", 8) == (store.get("s1").snapshot, store.get("s1").version)

    def test_stale_put_is_a_conflict_and_writes_nothing(self, store: SessionStore) -> None:
        """A put based on an old version raises SessionConflict and leaves the stored one intact."""
        store.create("s1", "one")
        store.put("s1", "two", expected_version=1)
        with pytest.raises(SessionConflict) as caught:
            store.put("s1", "stale", expected_version=1)
        assert ("s1", 1, 2) == (caught.value.session_id, caught.value.expected, caught.value.actual)
        assert ("two", 2) == (store.get("s1").snapshot, store.get("s1").version)

    def test_put_from_the_future_is_a_conflict(self, store: SessionStore) -> None:
        """A put naming a version the session never reached is refused like a stale one."""
        store.create("s1", "one")
        with pytest.raises(SessionConflict):
            store.put("s1", "two", expected_version=5)
        assert 1 == store.get("s1").version

    def test_create_over_an_existing_id_is_a_conflict(self, store: SessionStore) -> None:
        """Creating an id that is taken raises SessionConflict and keeps the existing session."""
        store.create("s1", "first")
        with pytest.raises(SessionConflict, match="already exists"):
            store.create("s1", "second")
        assert ("first", 1) == (store.get("s1").snapshot, store.get("s1").version)

    def test_get_of_an_unknown_id_is_not_found(self, store: SessionStore) -> None:
        """Reading an id that was never stored raises SessionNotFound naming it."""
        with pytest.raises(SessionNotFound, match="nope") as caught:
            store.get("nope")
        assert "nope" == caught.value.session_id

    def test_put_of_an_unknown_id_is_not_found(self, store: SessionStore) -> None:
        """Writing an id that was never created raises SessionNotFound and creates nothing."""
        with pytest.raises(SessionNotFound):
            store.put("nope", "x", expected_version=1)
        assert [] == store.list()

    def test_delete_removes_the_session(self, store: SessionStore) -> None:
        """A deleted session is gone; deleting it again raises SessionNotFound."""
        store.create("s1", "x")
        store.create("s2", "y")
        store.delete("s1")
        with pytest.raises(SessionNotFound):
            store.get("s1")
        with pytest.raises(SessionNotFound):
            store.delete("s1")
        assert ["s2"] == store.list()

    def test_list_returns_the_ids_sorted(self, store: SessionStore) -> None:
        """list() gives every stored id, sorted; an empty store lists nothing."""
        assert [] == store.list()
        for session_id in ("b", "c", "a-1", "a"):
            store.create(session_id, "{}")
        assert ["a", "a-1", "b", "c"] == store.list()

    @pytest.mark.parametrize("bad", ["", "has space", "a/b", "*", "x" * 129, "-lead"])
    def test_malformed_ids_are_never_found(self, store: SessionStore, bad: str) -> None:
        """An id without the shape of a session id is not found, and cannot be created."""
        with pytest.raises(SessionNotFound):
            store.get(bad)
        with pytest.raises(SessionNotFound):
            store.put(bad, "x", expected_version=1)
        with pytest.raises(ValueError, match="not a valid session id"):
            store.create(bad, "x")

    def test_snapshots_are_text(self, store: SessionStore) -> None:
        """A store keeps JSON text; anything else is a TypeError, not a stored session."""
        with pytest.raises(TypeError):
            store.create("s1", {"a": 1})  # type: ignore[arg-type]
        assert [] == store.list()

    def test_text_round_trips_exactly(self, store: SessionStore) -> None:
        """Non-ASCII text, newlines and quotes come back byte for byte."""
        text = '{"intention": "Ajouter l\'authentification \\u00e9\\n", "x": "日本語 — ✓"}'
        store.create("s1", text)
        store.put("s1", text + " ", expected_version=1)
        assert text + " " == store.get("s1").snapshot

    def test_errors_share_one_base(self, store: SessionStore) -> None:
        """Every store error is a SessionStoreError and a PreflightFsmError."""
        with pytest.raises(SessionStoreError) as caught:
            store.get("missing")
        assert isinstance(caught.value, PreflightFsmError)

    def test_a_session_lives_just_under_thirty_minutes_without_a_write(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """By default a session is still there 29 min 59 s after its last write."""
        store.create("s1", "x")
        clock.advance(30 * MINUTE - 1)
        assert 1 == store.get("s1").version

    def test_a_session_expires_after_thirty_minutes_and_is_removed(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """At 30 minutes without a write, get raises SessionExpired (hinting to start again) and
        removes the session, so it is then unknown."""
        store.create("s1", "x")
        clock.advance(30 * MINUTE)
        with pytest.raises(SessionExpired, match="start a new session") as caught:
            store.get("s1")
        assert "s1" == caught.value.session_id
        with pytest.raises(SessionNotFound):
            store.get("s1")

    def test_reading_does_not_extend_the_life(self, store: SessionStore, clock: SimClock) -> None:
        """Only writes (steps) count: reads in between do not keep a session alive."""
        store.create("s1", "x")
        for _ in range(3):
            clock.advance(10 * MINUTE - 1)
            store.get("s1")
        clock.advance(3)
        with pytest.raises(SessionExpired):
            store.get("s1")

    def test_every_write_restarts_the_expiry(self, store: SessionStore, clock: SimClock) -> None:
        """A put resets the 30 minutes: a session stepped every 20 minutes never expires."""
        store.create("s1", "x")
        for version in range(1, 5):
            clock.advance(20 * MINUTE)
            store.put("s1", "x", expected_version=version)
        clock.advance(20 * MINUTE)
        assert 5 == store.get("s1").version

    def test_writing_an_expired_session_is_expired(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """A put on an expired session raises SessionExpired, writes nothing and removes it."""
        store.create("s1", "x")
        clock.advance(31 * MINUTE)
        with pytest.raises(SessionExpired):
            store.put("s1", "y", expected_version=1)
        with pytest.raises(SessionNotFound):
            store.get("s1")

    def test_list_leaves_out_expired_sessions_without_removing_them(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """list() leaves out sessions past their expiry but writes nothing: reading one afterwards
        still says it expired (not that it never existed)."""
        store.create("old", "x")
        clock.advance(20 * MINUTE)
        store.create("new", "y")
        clock.advance(10 * MINUTE)
        assert ["new"] == store.list()
        with pytest.raises(SessionExpired):
            store.get("old")

    def test_delete_removes_an_expired_session_quietly(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """Deleting an expired session succeeds: it was going anyway."""
        store.create("s1", "x")
        clock.advance(60 * MINUTE)
        store.delete("s1")
        assert [] == store.list()

    def test_expiry_is_configurable(self, store_factory: StoreFactory, clock: SimClock) -> None:
        """expire_after sets the seconds without a write after which a session expires."""
        with store_factory(clock=clock, expire_after=90) as store:
            store.create("s1", "x")
            clock.advance(89)
            store.get("s1")
            clock.advance(1)
            with pytest.raises(SessionExpired, match="90 seconds"):
                store.get("s1")

    @pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
    def test_expiry_must_be_a_positive_duration(
        self, store_factory: StoreFactory, clock: SimClock, bad: float
    ) -> None:
        """A zero, negative or infinite expire_after is refused when the store is opened."""
        with pytest.raises(ValueError, match="expire_after"):
            store_factory(clock=clock, expire_after=bad)

    def test_entries_list_a_flows_sessions_without_their_snapshots(
        self, store: SessionStore
    ) -> None:
        """entries(flow=F) gives the metadata of the sessions created on flow F, sorted by id (C10);
        entries() gives every live session."""
        store.create("b", "x", flow="f1")
        store.create("a", "x", flow="f1")
        store.create("c", "x", flow="f2")
        on_f1 = store.entries(flow="f1")
        assert ["a", "b"] == [e.id for e in on_f1 if isinstance(e, SessionEntry)]
        assert ["a", "b", "c"] == [e.id for e in store.entries() if isinstance(e, SessionEntry)]

    def test_put_with_a_flow_moves_the_session_to_it(self, store: SessionStore) -> None:
        """C10: a migration writes the snapshot and the new flow together; put without keeps it."""
        store.create("a", "x", flow="f1")
        store.put("a", "y", 1)
        assert "f1" == store.get("a").flow
        moved = store.put("a", "z", 2, flow="f2")
        assert ("f2", "f2") == (moved.flow, store.get("a").flow)
        assert ["a"] == [e.id for e in store.entries(flow="f2") if not isinstance(e, Exception)]

    def test_each_session_keeps_its_own_expiry(self, store: SessionStore, clock: SimClock) -> None:
        """create(expire_after=) stays with the session; sessions without one use the store's."""
        store.create("short", "x", expire_after=60)
        store.create("long", "y")
        clock.advance(61)
        with pytest.raises(SessionExpired, match="1 minute"):
            store.get("short")
        assert (30 * MINUTE, "y") == (store.get("long").expire_after, store.get("long").snapshot)

    # -- reclaim, health --------------------------------------------------------------------------

    def test_reclaim_removes_expired_sessions_and_keeps_live_ones(
        self, store: SessionStore, clock: SimClock
    ) -> None:
        """reclaim() removes sessions past their expiry, so reading one is then not found (not
        expired), and leaves every live session as it was."""
        store.create("old", "x", expire_after=60)
        store.create("live", "y")
        clock.advance(61)
        assert 1 == store.reclaim()
        with pytest.raises(SessionNotFound):
            store.get("old")
        assert ("y", 1) == (store.get("live").snapshot, store.get("live").version)

    def test_reclaim_removes_at_most_its_limit(self, store: SessionStore, clock: SimClock) -> None:
        """One reclaim(limit=N) removes N expired sessions at most; the next call goes on."""
        for number in range(5):
            store.create(f"s{number}", "x", expire_after=60)
        clock.advance(61)
        assert 2 == store.reclaim(limit=2)
        assert 3 == store.reclaim(limit=10)
        assert 0 == store.reclaim()

    def test_a_working_store_passes_its_health_check(self, store: SessionStore) -> None:
        """check() is None when the store answers, and reading it creates no session."""
        assert store.check() is None
        assert [] == store.list()


class DurableStoreConformance(StoreConformance):
    """What a store whose sessions outlive the store object does besides (a file, a server)."""

    def test_sessions_outlive_the_store_object(
        self, store_factory: StoreFactory, clock: SimClock, store: SessionStore
    ) -> None:
        """What one store object wrote, another one opened on the same location reads."""
        store.create("s1", "x")
        store.put("s1", "y", expected_version=1)
        store.close()
        with store_factory(clock=clock) as again:
            assert ("y", 2) == (again.get("s1").snapshot, again.get("s1").version)
            assert ["s1"] == again.list()

    def test_a_session_keeps_its_expiry_when_reopened_with_another_default(
        self, store_factory: StoreFactory, clock: SimClock, store: SessionStore
    ) -> None:
        """create(expire_after=) stays with the session: a store opened later with another
        default expires it on its own schedule, and sessions without one keep theirs."""
        store.create("short", "x", expire_after=60)
        store.create("long", "y")
        clock.advance(61)
        with store_factory(clock=clock, expire_after=5 * MINUTE) as again:
            with pytest.raises(SessionExpired, match="1 minute"):
                again.get("short")
            assert (30 * MINUTE, "y") == (
                again.get("long").expire_after,
                again.get("long").snapshot,
            )
