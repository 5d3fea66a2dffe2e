"""A throw-away PostgreSQL server on loopback, for tests and benchmarks (a test helper, not
shipped).

It runs Debian's ``postgres`` (``/usr/lib/postgresql/<major>/bin``) in a temporary directory on a
free port of 127.0.0.1, with password (SCRAM) authentication on TCP, and is stopped and removed
when the block ends. PostgreSQL refuses to run as root: as root the server runs as the
``postgres`` user, in a directory that user owns::

    with throwaway_postgres() as url:      # postgresql://postgres:<password>@127.0.0.1:<port>/postgres
        store = PostgresStore(url)
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from preflight_fsm.errors import StoreUnavailable

__all__ = ["PASSWORD", "empty", "postgres_bin", "postgres_missing", "throwaway_postgres"]

PASSWORD = "pfsm-test-secret"
"""The superuser's password on every throw-away server (its tests check it is never shown)."""


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def postgres_missing() -> str | None:
    """Why a throw-away server cannot run here (what to install), or None."""
    if postgres_bin() is None:
        return "PostgreSQL is not installed (apt-get install postgresql; CI installs it)"
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]' in this clone)"
    return None


def _free_port() -> int:
    # Not store_backends.free_port: benchmarks import this module as tests.postgres_server.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_user() -> str | None:
    """Whom the server runs as: ``postgres`` when running as root (PostgreSQL refuses root)."""
    return "postgres" if os.geteuid() == 0 else None


@contextmanager
def throwaway_postgres(*, attempts: int = 5, options: tuple[str, ...] = ()) -> Iterator[str]:
    """Run a PostgreSQL server for the block; yield its ``postgresql://`` URL (with password).

    ``options`` are more server settings (``("-c", "fsync=on")``). Without them the server runs
    with ``fsync=off``: tests need no durability across power cuts, and run faster. Raises
    StoreUnavailable when it cannot start (``postgres_missing()`` says why beforehand).
    """
    why = postgres_missing()
    bin_dir = postgres_bin()
    if why is not None or bin_dir is None:
        raise StoreUnavailable(why or "PostgreSQL is not installed")
    import psycopg

    # Not under pytest's tmp_path: its parents are private to root, the server runs as postgres.
    home = Path(tempfile.mkdtemp(prefix="pfsm-postgres-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(home, "postgres", "postgres")
        (home / "pw").write_text(PASSWORD + "\n")
        if os.geteuid() == 0:
            shutil.chown(home / "pw", "postgres", "postgres")
        subprocess.run(
            [
                *(str(bin_dir / "initdb"), "-D", str(home / "data"), "-U", "postgres"),
                *("--pwfile", str(home / "pw"), "--auth-host=scram-sha-256"),
                *("--auth-local=peer", "-E", "UTF8", "--no-sync", "--no-instructions"),
            ],
            check=True,
            capture_output=True,
            timeout=120,
            user=_server_user(),
        )
        for _attempt in range(attempts):  # another process may take the free port first
            port = _free_port()
            server = subprocess.Popen(
                [
                    *(str(bin_dir / "postgres"), "-D", str(home / "data"), "-p", str(port)),
                    *("-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={home}"),
                    *("-c", "fsync=off", "-c", "max_connections=200"),
                    *options,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                user=_server_user(),
            )
            url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
            deadline = time.monotonic() + 60
            ready = False
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    psycopg.connect(url, connect_timeout=2).close()
                    ready = True
                    break
                except psycopg.OperationalError:
                    time.sleep(0.05)
            if not ready:
                server.kill()
                server.wait()
                continue
            try:
                yield url
            finally:
                server.terminate()  # "smart" shutdown is SIGTERM; SIGINT is "fast"
                server.send_signal(2)
                server.wait(timeout=30)
            return
        raise StoreUnavailable(
            f"postgres did not start on a free loopback port in {attempts} tries"
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


def empty(url: str) -> None:
    """Drop every session between tests (the table stays, as a store made it)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("DROP TABLE IF EXISTS preflight_fsm_sessions")
