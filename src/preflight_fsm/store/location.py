"""Which store a command uses: ``--store``, else ``PREFLIGHT_FSM_STORE``, else SQLite in ``.``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Final

from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER, Clock, SessionStore

__all__ = ["DEFAULT_PATH", "STORE_ENV", "open_store", "resolve_location"]

STORE_ENV: Final = "PREFLIGHT_FSM_STORE"
"""The environment variable naming the store when ``--store`` does not."""

DEFAULT_PATH: Final = Path(".preflight-fsm") / "sessions.sqlite3"
"""The default store: this SQLite file, relative to the working directory."""

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def resolve_location(location: str | os.PathLike[str] | None = None) -> str:
    """``location`` if given, else ``$PREFLIGHT_FSM_STORE`` if not empty, else the default."""
    if location is not None and str(location):
        return str(location)
    return os.environ.get(STORE_ENV) or str(DEFAULT_PATH)


def open_store(
    location: str | os.PathLike[str] | None = None,
    *,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    clock: Clock = time.time,
) -> SessionStore:
    """The store ``location`` names (see :func:`resolve_location`).

    ``redis://``, ``rediss://`` and ``unix://`` URLs open a RedisStore; ``memory:`` a MemoryStore
    (this process only); ``sqlite:///abs/path`` or any other text a SqliteStore at that path.
    """
    where = resolve_location(location)
    if where.startswith(_REDIS_SCHEMES):
        from preflight_fsm.store.redis import RedisStore

        return RedisStore(where, expire_after=expire_after, clock=clock)
    if where == "memory:":
        from preflight_fsm.store.memory import MemoryStore

        return MemoryStore(expire_after=expire_after, clock=clock)
    from preflight_fsm.store.sqlite import SqliteStore

    if where.startswith("sqlite://"):
        where = where.removeprefix("sqlite://")
    return SqliteStore(where, expire_after=expire_after, clock=clock)
