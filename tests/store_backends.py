"""The store backends the store tests run against, and a real throw-away ``redis-server``
(PostgreSQL's server is the session-wide ``postgres_url`` fixture, ``tests/postgres_server.py``).

Redis runs on loopback, on a free port, without persistence, for one test module. Tests that need
it skip (saying why) when ``redis-server`` or the ``redis`` package is missing on this machine;
``.ci/run`` installs both, so CI always runs them.
"""

from __future__ import annotations

import multiprocessing
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from preflight_fsm.store import MemoryStore, SessionStore, SqliteStore
from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER
from preflight_fsm.store.faults import SimClock
from redis_server import redis_missing, throwaway_redis

BACKENDS = ("memory", "sqlite", "redis")
DURABLE_BACKENDS = ("sqlite", "redis", "postgres")

FORK_SERVER = multiprocessing.get_context("forkserver")
"""Where the store tests' writer processes come from (tests/test_store_crash.py,
tests/test_store_concurrency.py): forked from a fork server, not from the test's process. A child
forked from a pytest worker inherits whatever the worker's other threads held at the fork (a
thread an earlier test left running): in one whole-suite run a writer forked so waited out its
PostgreSQL pool's 10 s start, which never happened with the file run alone. The server imports
these modules once (a spawned writer imported the package again, about half a second of CPU)
and runs no thread of its own."""
FORK_SERVER.set_forkserver_preload(
    [
        *("test_store_crash", "test_store_concurrency"),
        *("preflight_fsm.store.postgres", "preflight_fsm.store.redis", "psycopg_pool"),
    ]
)


FakeClock = SimClock
"""An injectable clock that moves only when told: expiry tests never sleep."""


def open_backend(
    backend: str,
    location: str,
    *,
    clock: FakeClock | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
) -> SessionStore:
    """A store of ``backend`` at ``location`` (a file path, a Redis or PostgreSQL URL; ignored
    for memory)."""
    # Without a fake clock, the stores' own default: the wall clock.
    now: Callable[[], float] = time.time if clock is None else clock
    if backend == "memory":
        return MemoryStore(expire_after=expire_after, clock=now)
    if backend == "sqlite":
        return SqliteStore(location, expire_after=expire_after, clock=now)
    if backend == "postgres":
        from preflight_fsm.store.postgres import PostgresStore

        return PostgresStore(location, expire_after=expire_after, clock=now)
    from preflight_fsm.store.redis import RedisStore

    return RedisStore(location, expire_after=expire_after, clock=now)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_redis(directory: Path, *, options: tuple[str, ...] = ()) -> Iterator[str]:
    """A redis-server working in ``directory`` for the block; yields its ``redis://`` URL.

    Skips the test, saying what to install, where redis-server or the client is missing.
    """
    reason = redis_missing()
    if reason is not None:
        pytest.skip(reason)
    with throwaway_redis(directory, options=options) as url:
        yield url


def flush(url: str) -> None:
    """Empty the server's current database between tests."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()
