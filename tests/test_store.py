"""The session store conformance suite: every backend (memory, SQLite, Redis) passes it as is."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from preflight_fsm.errors import (
    CorruptSession,
    PreflightFsmError,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    SessionStoreError,
    StoreUnavailable,
)
from preflight_fsm.store import SessionEntry, SessionStore, SqliteStore, StoredSession, open_store
from store_backends import BACKENDS, DURABLE_BACKENDS, FakeClock, flush, open_backend, running_redis

MINUTE = 60.0


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    backend = request.node.callspec.params["backend"]
    if backend == "redis":
        url: str = request.getfixturevalue("redis_url")
        flush(url)
        return url
    return str(tmp_path / "sessions.sqlite3")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, location: str, clock: FakeClock) -> Iterator[SessionStore]:
    with open_backend(backend, location, clock=clock) as opened:
        yield opened


# -- create, get, put, delete, list ---------------------------------------------------------------


def test_create_stores_version_one(store: SessionStore, clock: FakeClock) -> None:
    """A new session is stored at version 1 with the snapshot text exactly as given."""
    created = store.create("s1", '{"a": 1}')
    assert StoredSession("s1", 1, '{"a": 1}', clock.now, clock.now) == created
    assert created == store.get("s1")


def test_put_with_the_read_version_writes_the_next_version(
    store: SessionStore, clock: FakeClock
) -> None:
    """A put naming the stored version replaces the snapshot and bumps the version by one."""
    store.create("s1", "one")
    clock.advance(5)
    written = store.put("s1", "two", expected_version=1)
    assert (2, "two", clock.now) == (written.version, written.snapshot, written.updated_at)
    assert written == store.get("s1")


def test_versions_grow_by_one_on_every_write(store: SessionStore) -> None:
    """Every successful write increases the version by exactly one."""
    store.create("s1", "v1")
    for version in range(1, 8):
        assert version + 1 == store.put("s1", f"v{version + 1}", expected_version=version).version
    assert ("v8", 8) == (store.get("s1").snapshot, store.get("s1").version)


def test_stale_put_is_a_conflict_and_writes_nothing(store: SessionStore) -> None:
    """A put based on an old version raises SessionConflict and leaves the stored one intact."""
    store.create("s1", "one")
    store.put("s1", "two", expected_version=1)
    with pytest.raises(SessionConflict) as caught:
        store.put("s1", "stale", expected_version=1)
    assert ("s1", 1, 2) == (caught.value.session_id, caught.value.expected, caught.value.actual)
    assert ("two", 2) == (store.get("s1").snapshot, store.get("s1").version)


def test_put_from_the_future_is_a_conflict(store: SessionStore) -> None:
    """A put naming a version the session never reached is refused like a stale one."""
    store.create("s1", "one")
    with pytest.raises(SessionConflict):
        store.put("s1", "two", expected_version=5)
    assert 1 == store.get("s1").version


def test_create_over_an_existing_id_is_a_conflict(store: SessionStore) -> None:
    """Creating an id that is taken raises SessionConflict and keeps the existing session."""
    store.create("s1", "first")
    with pytest.raises(SessionConflict, match="already exists"):
        store.create("s1", "second")
    assert ("first", 1) == (store.get("s1").snapshot, store.get("s1").version)


def test_get_of_an_unknown_id_is_not_found(store: SessionStore) -> None:
    """Reading an id that was never stored raises SessionNotFound naming it."""
    with pytest.raises(SessionNotFound, match="nope") as caught:
        store.get("nope")
    assert "nope" == caught.value.session_id


def test_put_of_an_unknown_id_is_not_found(store: SessionStore) -> None:
    """Writing an id that was never created raises SessionNotFound and creates nothing."""
    with pytest.raises(SessionNotFound):
        store.put("nope", "x", expected_version=1)
    assert [] == store.list()


def test_delete_removes_the_session(store: SessionStore) -> None:
    """A deleted session is gone; deleting it again raises SessionNotFound."""
    store.create("s1", "x")
    store.create("s2", "y")
    store.delete("s1")
    with pytest.raises(SessionNotFound):
        store.get("s1")
    with pytest.raises(SessionNotFound):
        store.delete("s1")
    assert ["s2"] == store.list()


def test_list_returns_the_ids_sorted(store: SessionStore) -> None:
    """list() gives every stored id, sorted; an empty store lists nothing."""
    assert [] == store.list()
    for session_id in ("b", "c", "a-1", "a"):
        store.create(session_id, "{}")
    assert ["a", "a-1", "b", "c"] == store.list()


@pytest.mark.parametrize("bad", ["", "has space", "a/b", "*", "x" * 129, "-lead"])
def test_malformed_ids_are_never_found(store: SessionStore, bad: str) -> None:
    """An id without the shape of a session id is not found, and cannot be created."""
    with pytest.raises(SessionNotFound):
        store.get(bad)
    with pytest.raises(SessionNotFound):
        store.put(bad, "x", expected_version=1)
    with pytest.raises(ValueError, match="not a valid session id"):
        store.create(bad, "x")


def test_snapshots_are_text(store: SessionStore) -> None:
    """A store keeps JSON text; anything else is a TypeError, not a stored session."""
    with pytest.raises(TypeError):
        store.create("s1", {"a": 1})  # type: ignore[arg-type]
    assert [] == store.list()


def test_text_round_trips_exactly(store: SessionStore) -> None:
    """Non-ASCII text, newlines and quotes come back byte for byte."""
    text = '{"intention": "Ajouter l\'authentification \\u00e9\\n", "x": "日本語 — ✓"}'
    store.create("s1", text)
    store.put("s1", text + " ", expected_version=1)
    assert text + " " == store.get("s1").snapshot


def test_errors_share_one_base(store: SessionStore) -> None:
    """Every store error is a SessionStoreError and a PreflightFsmError."""
    with pytest.raises(SessionStoreError) as caught:
        store.get("missing")
    assert isinstance(caught.value, PreflightFsmError)


# -- expiry ---------------------------------------------------------------------------------------


def test_a_session_lives_just_under_thirty_minutes_without_a_write(
    store: SessionStore, clock: FakeClock
) -> None:
    """By default a session is still there 29 min 59 s after its last write."""
    store.create("s1", "x")
    clock.advance(30 * MINUTE - 1)
    assert 1 == store.get("s1").version


def test_a_session_expires_after_thirty_minutes_and_is_removed(
    store: SessionStore, clock: FakeClock
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


def test_reading_does_not_extend_the_life(store: SessionStore, clock: FakeClock) -> None:
    """Only writes (steps) count: reads in between do not keep a session alive."""
    store.create("s1", "x")
    for _ in range(3):
        clock.advance(10 * MINUTE - 1)
        store.get("s1")
    clock.advance(3)
    with pytest.raises(SessionExpired):
        store.get("s1")


def test_every_write_restarts_the_expiry(store: SessionStore, clock: FakeClock) -> None:
    """A put resets the 30 minutes: a session stepped every 20 minutes never expires."""
    store.create("s1", "x")
    for version in range(1, 5):
        clock.advance(20 * MINUTE)
        store.put("s1", "x", expected_version=version)
    clock.advance(20 * MINUTE)
    assert 5 == store.get("s1").version


def test_writing_an_expired_session_is_expired(store: SessionStore, clock: FakeClock) -> None:
    """A put on an expired session raises SessionExpired, writes nothing and removes it."""
    store.create("s1", "x")
    clock.advance(31 * MINUTE)
    with pytest.raises(SessionExpired):
        store.put("s1", "y", expected_version=1)
    with pytest.raises(SessionNotFound):
        store.get("s1")


def test_list_leaves_out_expired_sessions_without_removing_them(
    store: SessionStore, clock: FakeClock
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


def test_delete_removes_an_expired_session_quietly(store: SessionStore, clock: FakeClock) -> None:
    """Deleting an expired session succeeds: it was going anyway."""
    store.create("s1", "x")
    clock.advance(60 * MINUTE)
    store.delete("s1")
    assert [] == store.list()


def test_expiry_is_configurable(backend: str, location: str, clock: FakeClock) -> None:
    """expire_after sets the seconds without a write after which a session expires."""
    with open_backend(backend, location, clock=clock, expire_after=90) as store:
        store.create("s1", "x")
        clock.advance(89)
        store.get("s1")
        clock.advance(1)
        with pytest.raises(SessionExpired, match="90 seconds"):
            store.get("s1")


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_expiry_must_be_a_positive_duration(backend: str, location: str, bad: float) -> None:
    """A zero, negative or infinite expire_after is refused when the store is opened."""
    with pytest.raises(ValueError, match="expire_after"):
        open_backend(backend, location, expire_after=bad)


# -- durability -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", DURABLE_BACKENDS, indirect=True)
def test_sessions_outlive_the_store_object(
    backend: str, location: str, clock: FakeClock, store: SessionStore
) -> None:
    """What one store object wrote, another one opened on the same location reads."""
    store.create("s1", "x")
    store.put("s1", "y", expected_version=1)
    store.close()
    with open_backend(backend, location, clock=clock) as again:
        assert ("y", 2) == (again.get("s1").snapshot, again.get("s1").version)
        assert ["s1"] == again.list()


@pytest.mark.parametrize("backend", DURABLE_BACKENDS, indirect=True)
def test_open_store_picks_the_backend_from_the_location(
    backend: str, location: str, clock: FakeClock
) -> None:
    """open_store opens a Redis URL as Redis and a path as SQLite, with the expiry given."""
    with open_store(location, expire_after=120, clock=clock) as store:
        assert (location, 120.0) == (store.location, store.expire_after)
        assert backend == type(store).__name__.removesuffix("Store").lower()


# -- corrupt rows ---------------------------------------------------------------------------------


def _corrupt_sqlite(location: str, sql: str, *params: object) -> None:
    db = sqlite3.connect(location)
    try:
        with db:
            db.execute(sql, params)
    finally:
        db.close()


def _corrupt_redis(url: str, *command: object) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.execute_command(*command)  # type: ignore[no-untyped-call]  # redis-py: unannotated
    finally:
        client.close()


# The SQL statement, or the Redis command, that corrupts session "bad".
SQLITE_CORRUPTIONS: dict[str, str] = {
    "version is text": "UPDATE sessions SET version = 'two' WHERE id = 'bad'",
    "version is zero": "UPDATE sessions SET version = 0 WHERE id = 'bad'",
    "snapshot is a blob": "UPDATE sessions SET snapshot = x'ff00fe' WHERE id = 'bad'",
    "updated_at is text": "UPDATE sessions SET updated_at = 'noon' WHERE id = 'bad'",
}
REDIS_CORRUPTIONS: dict[str, tuple[str | bytes, ...]] = {
    "version is text": ("HSET", "preflight-fsm:session:bad", "version", "two"),
    "snapshot is not utf-8": ("HSET", "preflight-fsm:session:bad", "snapshot", b"\xff\x00"),
    "a field is missing": ("HDEL", "preflight-fsm:session:bad", "updated_at"),
    "key is no hash": ("SET", "preflight-fsm:session:bad", "garbage"),
}
CORRUPT_CASES = [
    pytest.param(backend, name, id=f"{backend}-{name}")
    for backend, cases in (("sqlite", SQLITE_CORRUPTIONS), ("redis", REDIS_CORRUPTIONS))
    for name in cases
]


@pytest.mark.parametrize(("backend", "corruption"), CORRUPT_CASES, indirect=["backend"])
def test_a_corrupt_row_is_reported_for_that_session_only(
    backend: str, location: str, store: SessionStore, corruption: str
) -> None:
    """A row with unreadable fields raises CorruptSession for its id (on get; on put too when its
    version or times are unreadable), is still listed (so it can be reported and deleted), and
    every other session reads as before."""
    store.create("bad", "x")
    store.create("good", "y")
    if backend == "sqlite":
        _corrupt_sqlite(location, SQLITE_CORRUPTIONS[corruption])
    else:
        _corrupt_redis(location, *REDIS_CORRUPTIONS[corruption])
    with pytest.raises(CorruptSession) as caught:
        store.get("bad")
    assert "bad" == caught.value.session_id
    if "snapshot" not in corruption:  # put checks the version and times, never the snapshot
        with pytest.raises(CorruptSession):
            store.put("bad", "z", expected_version=1)
    assert ["bad", "good"] == store.list()
    assert ("y", 1) == (store.get("good").snapshot, store.get("good").version)
    store.delete("bad")
    assert ["good"] == store.list()


def test_a_file_that_is_no_database_is_unavailable(tmp_path: Path) -> None:
    """Opening a store on a file that is not SQLite raises StoreUnavailable naming the path."""
    path = tmp_path / "sessions.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreUnavailable, match=r"sessions\.sqlite3"):
        SqliteStore(path)


def test_an_unreachable_redis_is_unavailable(tmp_path: Path) -> None:
    """A Redis URL nobody listens on raises StoreUnavailable on first use, naming the URL."""
    pytest.importorskip("redis")
    from store_backends import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"
    with open_store(url) as store, pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1"):
        store.get("s1")


@pytest.mark.parametrize(
    ("setting", "expected"),
    [(None, 1), ("NORMAL", 1), ("FULL", 2)],
    ids=["default", "normal", "full"],
)
def test_the_sqlite_store_runs_in_wal_mode_with_the_chosen_sync(
    tmp_path: Path, setting: Literal["NORMAL", "FULL"] | None, expected: int
) -> None:
    """WAL mode (readers never block the writer); synchronous NORMAL by default, FULL on request."""
    options: dict[str, Any] = {} if setting is None else {"synchronous": setting}
    with SqliteStore(tmp_path / "s.sqlite3", **options) as store:
        store.create("s1", "x")
        db = store._db
        assert db is not None
        assert (b"wal", expected) == (
            db.execute("PRAGMA journal_mode").fetchone()[0],
            db.execute("PRAGMA synchronous").fetchone()[0],
        )


def test_an_unknown_sqlite_sync_setting_is_refused(tmp_path: Path) -> None:
    """A synchronous value other than NORMAL or FULL fails clearly, naming both."""
    with pytest.raises(ValueError, match="NORMAL' or 'FULL"):
        SqliteStore(tmp_path / "s.sqlite3", synchronous="OFF")  # type: ignore[arg-type]


def test_the_sqlite_store_creates_its_directory(tmp_path: Path) -> None:
    """A store path in directories that do not exist yet creates them (.preflight-fsm/)."""
    with open_store(str(tmp_path / ".preflight-fsm" / "sessions.sqlite3")) as store:
        store.create("s1", "x")
    assert (tmp_path / ".preflight-fsm" / "sessions.sqlite3").is_file()


@pytest.mark.parametrize(
    "error",
    [
        SessionNotFound("s1"),
        SessionExpired("s1", 1800.0),
        SessionConflict("s1", 1, 2),
        CorruptSession("s1", "its version is 'x'"),
        StoreUnavailable("cannot reach it"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_store_errors_survive_pickling(error: SessionStoreError) -> None:
    """Store errors cross process boundaries (multiprocessing) with message and attributes."""
    import pickle

    again = pickle.loads(pickle.dumps(error))
    assert (type(error), str(error), vars(error)) == (type(again), str(again), vars(again))


# -- issue 14: per-session expiry and flow, stores never adopted or lost unseen ----------------


def test_each_session_keeps_its_own_expiry(backend: str, location: str, clock: FakeClock) -> None:
    """create(expire_after=) stays with the session: a store opened later with another default
    expires it on its own schedule, and sessions without one use the default they were made
    with."""
    with open_backend(backend, location, clock=clock) as store:
        store.create("short", "x", expire_after=60)
        store.create("long", "y")
        clock.advance(61)
        # memory: sessions live in the store object itself, so it stays open for the check
        again = store if backend == "memory" else open_backend(backend, location, clock=clock)
        try:
            with pytest.raises(SessionExpired, match="1 minute"):
                again.get("short")
            assert (30 * MINUTE, "y") == (
                again.get("long").expire_after,
                again.get("long").snapshot,
            )
        finally:
            if again is not store:
                again.close()


def test_entries_list_a_flows_sessions_without_their_snapshots(store: SessionStore) -> None:
    """entries(flow=F) gives the metadata of the sessions created on flow F, sorted by id (C10);
    entries() gives every live session."""
    store.create("b", "x", flow="f1")
    store.create("a", "x", flow="f1")
    store.create("c", "x", flow="f2")
    on_f1 = store.entries(flow="f1")
    assert ["a", "b"] == [e.id for e in on_f1 if isinstance(e, SessionEntry)]
    assert ["a", "b", "c"] == [e.id for e in store.entries() if isinstance(e, SessionEntry)]


def test_a_missing_sqlite_store_opened_without_create_reads_as_empty(tmp_path: Path) -> None:
    """SqliteStore(create=False) on a path that does not exist creates neither the file nor its
    directory, lists nothing and knows no session."""
    path = tmp_path / "not" / "here.sqlite3"
    with SqliteStore(path, create=False) as store:
        assert ([], False) == (store.list(), store.exists)
        with pytest.raises(SessionNotFound):
            store.get("s1")
    assert [] == list(tmp_path.iterdir())


@pytest.mark.parametrize("change", ["removed", "replaced"])
def test_writing_to_a_store_removed_or_replaced_under_it_is_refused(
    tmp_path: Path, change: str
) -> None:
    """When the store's file is removed or replaced while a process has it open, that process's
    next write raises StoreUnavailable instead of landing in a file nobody will read again."""
    directory = tmp_path / ".preflight-fsm"
    with SqliteStore(directory / "sessions.sqlite3") as store:
        store.create("s1", "x")
        if change == "removed":
            shutil.rmtree(directory)
        else:
            with SqliteStore(tmp_path / "other.sqlite3"):
                pass
            (tmp_path / "other.sqlite3").replace(directory / "sessions.sqlite3")
        with pytest.raises(StoreUnavailable, match="removed or replaced"):
            store.put("s1", "y", expected_version=1)


@pytest.mark.parametrize(
    "location",
    ["reddis://localhost:6379/0", "http://x", "s3:bucket", "sqlite://relative.db"],
    ids=["mistyped-redis", "http", "other-scheme", "sqlite-not-absolute"],
)
def test_open_store_refuses_locations_it_cannot_be(tmp_path: Path, location: str) -> None:
    """A location with an unknown scheme is refused naming what is accepted; nothing is made."""
    with pytest.raises(StoreUnavailable, match=r"a SQLite file path|absolute"):
        open_store(location)
    assert [] == list(tmp_path.iterdir())


def test_two_processes_creating_the_same_store_share_one(tmp_path: Path) -> None:
    """Stores created at the same path by two openers are one store: both see each session."""
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path) as first, SqliteStore(path) as second:
        first.create("s1", "x")
        assert "x" == second.get("s1").snapshot


def test_redis_durability_warning_names_the_missing_persistence(
    redis_url: str, tmp_path: Path
) -> None:
    """durability_warning() explains that a Redis without AOF or save points loses sessions on
    restart, and says nothing about one with appendonly yes."""
    from preflight_fsm.store.redis import RedisStore

    with RedisStore(redis_url) as store:
        assert "appendonly" in (store.durability_warning() or "")
    with (
        running_redis(tmp_path, options=("--appendonly", "yes")) as durable,
        RedisStore(durable) as store,
    ):
        assert store.durability_warning() is None


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(1, "after 1 second without"), (2, "after 2 seconds without"), (0.5, "after 0.5 seconds")],
    ids=["one", "two", "half"],
)
def test_the_expiry_message_says_the_duration_in_good_english(seconds: float, said: str) -> None:
    """SessionExpired says '1 second', never '1 seconds'."""
    assert said in str(SessionExpired("s1", seconds))


def test_a_store_of_the_unreleased_first_layout_is_named_as_such(tmp_path: Path) -> None:
    """A store written before stores were marked (layout 1) is refused saying what it is."""
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path)
    with db:
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL, "
            "snapshot TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)"
        )
    db.close()
    with pytest.raises(StoreUnavailable, match="earlier, unreleased preflight-fsm"):
        SqliteStore(path)


def test_put_with_a_flow_moves_the_session_to_it(store: SessionStore) -> None:
    """C10: a migration writes the snapshot and the new flow together; put without keeps it."""
    store.create("a", "x", flow="f1")
    store.put("a", "y", 1)
    assert "f1" == store.get("a").flow
    moved = store.put("a", "z", 2, flow="f2")
    assert ("f2", "f2") == (moved.flow, store.get("a").flow)
    assert ["a"] == [e.id for e in store.entries(flow="f2") if not isinstance(e, Exception)]


# -- issue 23: a deleted store's -wal, a copy without its -wal --------------------------------


def _abandon(path: Path) -> None:
    """Leave ``path``'s steps in its -wal, as a process killed while writing does (no close)."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys\n"
            "from preflight_fsm.store import SqliteStore\n"
            "store = SqliteStore(sys.argv[1])\n"
            "for i in range(30): store.create(f's{i}', 'x')\n"
            "os._exit(0)\n",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert 0 == done.returncode, done.stderr
    assert 0 < path.with_name(path.name + "-wal").stat().st_size


def test_a_deleted_store_whose_wal_remains_is_not_brought_back(tmp_path: Path) -> None:
    """Deleting sessions.sqlite3 while its -wal remains: the next store there is refused, naming
    the -wal, instead of replaying the deleted sessions into a new file."""
    path = tmp_path / "sessions.sqlite3"
    _abandon(path)
    path.unlink()
    with pytest.raises(StoreUnavailable, match=r"was deleted, but its write-ahead log"):
        SqliteStore(path)
    assert not path.exists()


def test_a_copy_made_without_its_wal_is_refused_not_read_as_empty(tmp_path: Path) -> None:
    """A store copied while in use, without its -wal, is refused saying so; with its -wal beside
    it, the copy holds every session."""
    path = tmp_path / "sessions.sqlite3"
    _abandon(path)
    (tmp_path / "copy").mkdir()
    shutil.copy(path, tmp_path / "copy" / "sessions.sqlite3")
    with pytest.raises(StoreUnavailable, match=r"copy of a store that was in use"):
        SqliteStore(tmp_path / "copy" / "sessions.sqlite3")
    shutil.copy(tmp_path / "sessions.sqlite3-wal", tmp_path / "copy" / "sessions.sqlite3-wal")
    with SqliteStore(tmp_path / "copy" / "sessions.sqlite3") as copy:
        assert 30 == len(copy.list())


def test_a_store_closed_cleanly_copies_as_a_single_file(tmp_path: Path) -> None:
    """After the last process closes the store, the file alone holds every session: its copy
    opens and lists them all."""
    path = tmp_path / "sessions.sqlite3"
    with SqliteStore(path) as store:
        for i in range(5):
            store.create(f"s{i}", "x")
    (tmp_path / "copy").mkdir()
    shutil.copy(path, tmp_path / "copy" / "sessions.sqlite3")
    with SqliteStore(tmp_path / "copy" / "sessions.sqlite3") as copy:
        assert 5 == len(copy.list())
