"""A throw-away PostgreSQL server on loopback, for tests and benchmarks (a test helper, not
shipped).

It runs Debian's ``postgres`` (``/usr/lib/postgresql/<major>/bin``) in a temporary directory on a
free port of 127.0.0.1, with password (SCRAM) authentication on TCP, and is stopped and removed
when the block ends. PostgreSQL refuses to run as root: as root the server runs as the
``postgres`` user, in a directory that user owns::

    with throwaway_postgres() as url:      # postgresql://postgres:<password>@127.0.0.1:<port>/postgres
        store = PostgresStore(url)

Servers given one ``initialized`` directory (the test run's, conftest.py) share ``initdb``'s work:
the first keeps a copy of its fresh data directory there, the others copy it (D321).
"""

from __future__ import annotations

import fcntl
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


def _initdb(bin_dir: Path, home: Path) -> None:
    """A new cluster in ``home / "data"``: the superuser ``postgres`` with ``PASSWORD``."""
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


def _copy_tree(source: Path, target: Path) -> None:
    """``cp -a``: the files keep their owner (the server's user, where root runs the tests) and
    their modes (PostgreSQL refuses a data directory others can read)."""
    subprocess.run(
        ["cp", "-a", "--", str(source), str(target)], check=True, capture_output=True, timeout=120
    )


def _new_cluster(bin_dir: Path, home: Path, initialized: Path | None) -> None:
    """A fresh cluster in ``home / "data"``: ``initdb``'s (about 0.55 s of CPU), or a copy of
    the one kept in ``initialized`` (0.03 s on a RAM disk); the first server given
    ``initialized`` runs ``initdb`` and keeps a copy there, under a lock other processes wait on."""
    if initialized is None:
        _initdb(bin_dir, home)
        return
    kept = initialized / "data"
    initialized.mkdir(parents=True, exist_ok=True)
    with (initialized / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            _initdb(bin_dir, home)
            copying = initialized / "data.copying"
            shutil.rmtree(copying, ignore_errors=True)  # a copy cut short by an earlier run
            _copy_tree(home / "data", copying)
            copying.rename(kept)  # whoever sees it finds it whole
            return
    _copy_tree(kept, home / "data")


@contextmanager
def throwaway_postgres(
    *, attempts: int = 5, options: tuple[str, ...] = (), initialized: Path | None = None
) -> Iterator[str]:
    """Run a PostgreSQL server for the block; yield its ``postgresql://`` URL (with password).

    ``options`` are more server settings (``("-c", "fsync=on")``). Without them the server runs
    with ``fsync=off``: tests need no durability across power cuts, and run faster. Servers
    given the same ``initialized`` directory start from one ``initdb``'s fresh cluster, copied
    (``_new_cluster``). Raises StoreUnavailable when it cannot start (``postgres_missing()``
    says why beforehand).
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
        _new_cluster(bin_dir, home, initialized)
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
