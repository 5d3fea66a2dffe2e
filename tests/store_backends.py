"""The store backends the store tests run against, and a real throw-away ``redis-server``.

Redis runs on loopback, on a free port, without persistence, for one test module. Tests that need
it skip (saying why) when ``redis-server`` or the ``redis`` package is missing on this machine;
``.ci/run`` installs both, so CI always runs them.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from preflight_fsm.store import MemoryStore, SessionStore, SqliteStore
from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER

BACKENDS = ("memory", "sqlite", "redis")
DURABLE_BACKENDS = ("sqlite", "redis")


class FakeClock:
    """An injectable clock that moves only when told: expiry tests never sleep."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def open_backend(
    backend: str,
    location: str,
    *,
    clock: FakeClock | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
) -> SessionStore:
    """A store of ``backend`` at ``location`` (a file path, a Redis URL; ignored for memory)."""
    options = {"expire_after": expire_after, **({"clock": clock} if clock else {})}
    if backend == "memory":
        return MemoryStore(**options)
    if backend == "sqlite":
        return SqliteStore(location, **options)
    from preflight_fsm.store.redis import RedisStore

    return RedisStore(location, **options)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _why_not() -> str | None:
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server; CI installs it)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis package is not installed (pip install 'preflight-fsm[redis]')"
    return None


@contextmanager
def running_redis(directory: Path) -> Iterator[str]:
    """A redis-server working in ``directory`` for the block; yields its ``redis://`` URL."""
    reason = _why_not()
    if reason is not None:
        pytest.skip(reason)
    import redis

    for _attempt in range(5):  # another process may take the free port before the server does
        port = free_port()
        server = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(directory),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url, socket_connect_timeout=0.2)
        try:
            deadline = time.monotonic() + 10
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
            else:
                server.kill()
                server.wait()
                continue
            try:
                yield url
            finally:
                server.terminate()
                server.wait(timeout=10)
            return
        finally:
            client.close()
    pytest.fail("redis-server did not start on a free loopback port in 5 attempts")


def flush(url: str) -> None:
    """Empty the server's current database between tests."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()
