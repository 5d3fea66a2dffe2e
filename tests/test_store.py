"""The built-in stores pass the shipped conformance suite (``preflight_fsm.store.testing``); what
is particular to one backend (its file, its server, its corrupt rows) is tested here."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    SessionStoreError,
    StoreUnavailable,
)
from preflight_fsm.store import MemoryStore, SessionStore, SqliteStore, open_store, shown_location
from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER, Clock, StoreWouldWait
from preflight_fsm.store.testing import DurableStoreConformance, StoreConformance, StoreFactory
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
    if backend == "postgres":
        from postgres_server import empty

        url = request.getfixturevalue("postgres_url")
        empty(url)
        return url
    return str(tmp_path / "sessions.sqlite3")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, location: str, clock: FakeClock) -> Iterator[SessionStore]:
    with open_backend(backend, location, clock=clock) as opened:
        yield opened


class TestMemoryStore(StoreConformance):
    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        def opened(*, clock: Clock, expire_after: float = DEFAULT_EXPIRE_AFTER) -> SessionStore:
            return MemoryStore(clock=clock, expire_after=expire_after)

        return opened


class TestSqliteStore(DurableStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        def opened(*, clock: Clock, expire_after: float = DEFAULT_EXPIRE_AFTER) -> SessionStore:
            return SqliteStore(
                tmp_path / "sessions.sqlite3", clock=clock, expire_after=expire_after
            )

        return opened


class TestRedisStore(DurableStoreConformance):
    @pytest.fixture
    def store_factory(self, redis_url: str) -> StoreFactory:
        from preflight_fsm.store.redis import RedisStore

        flush(redis_url)

        def opened(*, clock: Clock, expire_after: float = DEFAULT_EXPIRE_AFTER) -> SessionStore:
            return RedisStore(redis_url, clock=clock, expire_after=expire_after)

        return opened


class TestPostgresStore(DurableStoreConformance):
    @pytest.fixture
    def store_factory(self, postgres_url: str) -> StoreFactory:
        from postgres_server import empty
        from preflight_fsm.store.postgres import PostgresStore

        empty(postgres_url)

        def opened(*, clock: Clock, expire_after: float = DEFAULT_EXPIRE_AFTER) -> SessionStore:
            return PostgresStore(postgres_url, clock=clock, expire_after=expire_after)

        return opened


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"], indirect=True)
def test_a_create_reclaims_expired_sessions(store: SessionStore, clock: FakeClock) -> None:
    """Creating a session removes expired ones (a bounded batch) without anyone reading them:
    they are then unknown, not expired."""
    store.create("old", "x", expire_after=60)
    clock.advance(61)
    store.create("new", "y")
    with pytest.raises(SessionNotFound):
        store.get("old")


@pytest.mark.parametrize("backend", ["memory", "sqlite"], indirect=True)
def test_creates_reclaim_at_most_once_a_second_of_the_store_clock(
    store: SessionStore, clock: FakeClock
) -> None:
    """SQLite and memory find expired sessions by reading every row, so a create reclaims only
    when a second has passed since the last one that did; an expired session left meanwhile
    still reads as expired."""
    store.create("old", "x", expire_after=60)
    clock.advance(59.5)
    store.create("a", "y")  # reclaims: nothing has expired yet
    clock.advance(0.6)
    store.create("b", "y")  # 0.6 s after the last reclaim: none
    with pytest.raises(SessionExpired):
        store.get("old")
    store.create("old", "x", expire_after=60)  # the expired read removed it; again
    clock.advance(60.5)
    store.create("c", "y")
    with pytest.raises(SessionNotFound):
        store.get("old")


def test_sqlite_reclaim_leaves_a_corrupt_row_to_be_reported(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A row whose times are unreadable is never taken for expired: it stays, reported as
    corrupt, for a person to look at."""
    location = str(tmp_path / "sessions.sqlite3")
    with open_backend("sqlite", location, clock=clock) as store:
        store.create("bad", "x")
        _corrupt_sqlite(location, "UPDATE sessions SET updated_at = 'soon' WHERE id = 'bad'")
        clock.advance(DEFAULT_EXPIRE_AFTER * 2)
        assert 0 == store.reclaim()
        with pytest.raises(CorruptSession):
            store.get("bad")


@pytest.mark.parametrize("backend", DURABLE_BACKENDS, indirect=True)
def test_open_store_picks_the_backend_from_the_location(
    backend: str, location: str, clock: FakeClock
) -> None:
    """open_store opens a Redis URL as Redis, a PostgreSQL URL as PostgreSQL and a path as
    SQLite, with the expiry given."""
    with open_store(location, expire_after=120, clock=clock) as store:
        assert (shown_location(location), 120.0) == (store.location, store.expire_after)
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
    with pytest.raises(StoreUnavailable, match=r"sessions\.sqlite3' is not a SQLite database"):
        SqliteStore(path)


_COUNT_ROWS = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
    "print(db.execute('SELECT COUNT(*) FROM sessions').fetchone()[0]); db.close()"
)


def test_a_second_store_on_the_file_leaves_the_first_ones_log_in_place(tmp_path: Path) -> None:
    """Opening a second store on a file this process has open keeps the first one's SQLite locks:
    another process's reader closing then deletes no -wal under it, and the first store's next
    step is read by another process (it was lost, behind a disk I/O error)."""
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path) as first:
        first.create("s1", "x")
        with SqliteStore(path):
            for _ in range(3):
                read = [sys.executable, "-c", _COUNT_ROWS, str(path)]
                subprocess.run(read, check=True, capture_output=True, timeout=60)
            first.create("s2", "y")
            done = subprocess.run(read, capture_output=True, text=True, timeout=60)
    assert ("2", "") == (done.stdout.strip(), done.stderr)


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


# -- issue 23: a deleted store's -wal, a copy without its -wal --------------------------------


def _abandon(path: Path) -> None:
    """Leave ``path``'s steps in its -wal, as a process killed while writing does (no close):
    a child forked from this process (the store's modules already imported) writes them and
    exits without closing anything."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        status = 1
        try:
            store = SqliteStore(path)
            for i in range(30):
                store.create(f"s{i}", "x")
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert 0 == os.waitstatus_to_exitcode(status)
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


def test_a_redis_create_whose_ttl_fails_leaves_no_session(redis_url: str) -> None:
    """The create script removes the hash it wrote when PEXPIRE refuses the TTL: a failed
    create leaves no session behind, let alone one without expiry (Redis does not roll a
    script back)."""
    from preflight_fsm.store.redis import RedisStore

    flush(redis_url)
    with RedisStore(redis_url) as store:
        key = store._key("s1")
        with pytest.raises(Exception, match="not an integer or out of range"):
            store._create(keys=[key], args=["x", "1.0", "not-a-ttl", "60.0", ""])
        assert 0 == store._client.exists(key)


def test_a_redis_store_runs_commands_one_after_another_on_one_connection_it_closes(
    redis_url: str,
) -> None:
    """Sessions created, read and written one after another use one connection of the store's
    (each command's client is put back, none left behind), and closing the store closes it."""
    import redis

    from preflight_fsm.store.redis import RedisStore

    flush(redis_url)
    probe = redis.Redis.from_url(redis_url)
    try:
        alone = int(probe.info("clients")["connected_clients"])  # the probe itself
        with RedisStore(redis_url) as store:
            for n in range(5):
                store.create(f"s{n}", "x")
                store.put(f"s{n}", "y", store.get(f"s{n}").version)
            assert 5 == len(store.list())
            assert alone + 1 == int(probe.info("clients")["connected_clients"])
        assert alone == int(probe.info("clients")["connected_clients"])
    finally:
        probe.close()


def test_a_backup_of_a_store_in_use_opens_alone_with_every_session(tmp_path: Path) -> None:
    """SqliteStore.backup copies a store still in use (its steps in the -wal) to a file that
    opens alone and holds every session, never refused as a copy made without its -wal."""
    path = tmp_path / "sessions.sqlite3"
    _abandon(path)
    with SqliteStore(path) as store:
        store.backup(tmp_path / "backup.sqlite3")
    assert not (tmp_path / "backup.sqlite3-wal").exists()
    with SqliteStore(tmp_path / "backup.sqlite3") as copy:
        assert 30 == len(copy.list())


@contextmanager
def _write_lock_held_by_another_connection(path: Path) -> Iterator[None]:
    """Another connection (SQLite locks it as it would another process) holds the write lock."""
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_sqlite_write_that_would_wait_for_the_lock_refuses_at_once_and_writes_nothing(
    tmp_path: Path,
) -> None:
    with SqliteStore(tmp_path / "s.sqlite3", timeout=60.0) as store:
        store.create("s1", '{"x": 1}')
        trying = store.without_waiting()
        assert trying is not None
        started = time.monotonic()
        with _write_lock_held_by_another_connection(store.path), trying:
            with pytest.raises(StoreWouldWait):
                store.put("s1", '{"x": 2}', 1)
            with pytest.raises(StoreWouldWait):
                store.create("s2", '{"x": 1}')
            assert 1 == store.get("s1").version  # reads take no lock a writer holds
        assert time.monotonic() - started < 30  # neither write waited its 60 s bound
        assert ["s1"] == store.list()


def test_a_sqlite_write_outside_without_waiting_waits_for_the_lock_again(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite3", timeout=0.3) as store:
        store.create("s1", '{"x": 1}')
        trying = store.without_waiting()
        assert trying is not None
        with _write_lock_held_by_another_connection(store.path):
            with trying, pytest.raises(StoreWouldWait):
                store.put("s1", '{"x": 2}', 1)
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="is busy"):
                store.put("s1", '{"x": 2}', 1)
            assert time.monotonic() - started >= 0.25  # its bound, not the refusal's zero
        assert 2 == store.put("s1", '{"x": 2}', 1).version


def test_a_store_that_says_nothing_makes_no_promise_not_to_wait() -> None:
    assert None is MemoryStore().without_waiting()
