"""A throw-away ``redis-server`` on loopback, for tests and benchmarks (a test helper, not shipped).

It listens on a free port of 127.0.0.1, keeps nothing on disk, and stops when the block ends::

    with throwaway_redis(tmp_dir) as url:
        store = RedisStore(url)
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from preflight_fsm.errors import StoreUnavailable

__all__ = ["redis_missing", "throwaway_redis"]


def redis_missing() -> str | None:
    """Why a throw-away server cannot run here (what to install), or None."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server; CI installs it)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis package is not installed (pip install -e '.[redis]' in this clone)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def throwaway_redis(
    directory: str | Path, *, attempts: int = 5, options: tuple[str, ...] = ()
) -> Iterator[str]:
    """Run a redis-server working in ``directory`` for the block; yield its ``redis://`` URL.

    ``options`` are more server options (``("--appendonly", "yes")``, ``("--requirepass", pw)``;
    later options win). Raises StoreUnavailable when it cannot start (``redis_missing()`` says
    why beforehand).
    """
    why = redis_missing()
    if why is not None:
        raise StoreUnavailable(why)
    import redis

    for _attempt in range(attempts):  # another process may take the free port first
        port = _free_port()
        command = [
            *("redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)),
            *("--save", "", "--appendonly", "no", "--protected-mode", "yes"),
            *options,
        ]
        server = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        password = (
            options[options.index("--requirepass") + 1] if "--requirepass" in options else None
        )
        client = redis.Redis.from_url(url, socket_connect_timeout=0.2, password=password)
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
    raise StoreUnavailable(
        f"redis-server did not start on a free loopback port in {attempts} tries"
    )
