"""Which store a command uses: ``--store``, else ``PREFLIGHT_FSM_STORE``, else SQLite in ``.``.

A location is one a backend registered (``store/schemes.py``: ``sqlite:///path``, ``redis://``,
``postgresql://``, ``memory:``, ...) or a file path (a SQLite store). Anything else that looks like
a URL (``reddis://…``, ``http://…``, ``s3:…``) is refused by name instead of becoming a file of
that name: a mistyped store must never be a new, empty one.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Final

from preflight_fsm.errors import StoreUnavailable
from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER, Clock, SessionStore
from preflight_fsm.store.folder import DEFAULT_FOLDER
from preflight_fsm.store.schemes import accepted_locations, scheme_for

__all__ = [
    "DEFAULT_PATH",
    "STORE_ENV",
    "accepted_locations",
    "open_store",
    "resolve_location",
    "shown_location",
]

STORE_ENV: Final = "PREFLIGHT_FSM_STORE"
"""The environment variable naming the store when ``--store`` does not."""

DEFAULT_PATH: Final = Path(DEFAULT_FOLDER) / "sessions.sqlite3"
"""The default store: this SQLite file, relative to the working directory."""

# A scheme as RFC 3986 spells it, then ":": two letters at least, so a Windows drive is a path.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")

# SQLite's own name for a database that lives in one connection: as a path it would be a file of
# that name in the working directory, which nobody who writes it expects.
_SQLITE_IN_MEMORY: Final = ":memory:"


def resolve_location(location: str | os.PathLike[str] | None = None) -> str:
    """``location`` if given, else ``$PREFLIGHT_FSM_STORE`` if not empty, else the default."""
    if location is not None and str(location):
        return str(location)
    return os.environ.get(STORE_ENV) or str(DEFAULT_PATH)


def shown_location(location: str) -> str:
    """``location`` as it may be printed: a URL's password replaced by ``***``, a file path made
    absolute (a person must find the file whatever directory the command ran in)."""
    scheme = scheme_for(location)
    if scheme is not None:
        return scheme.shown(location)
    if _SCHEME.match(location):
        return location
    return os.path.abspath(location)


def open_store(
    location: str | os.PathLike[str] | None = None,
    *,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    clock: Clock = time.time,
    create: bool = True,
) -> SessionStore:
    """The store ``location`` names (see :func:`resolve_location`).

    A location starting with a registered prefix opens that backend (``redis://`` a RedisStore,
    ``postgresql://`` a PostgresStore, ``memory:`` a MemoryStore, ``sqlite:///abs/path`` a
    SqliteStore); a path opens a SqliteStore there, made only when ``create`` is true (a store
    that does not exist yet reads as empty otherwise). Any other scheme raises StoreUnavailable
    naming what is accepted, and so is SQLite's ``:memory:`` (it is not a file here).
    ``expire_after`` is the expiry of sessions created without one of
    their own.
    """
    where = resolve_location(location)
    scheme = scheme_for(where)
    if scheme is not None:
        return scheme.opener(where, expire_after=expire_after, clock=clock, create=create)
    if where == _SQLITE_IN_MEMORY:
        raise StoreUnavailable(
            f"{_SQLITE_IN_MEMORY!r} is SQLite's name for a database inside one connection, not a "
            f"store: name a SQLite file (./{_SQLITE_IN_MEMORY} for a file of that name), or write "
            "memory: for sessions kept in one process only (`mcp --store memory:`, code)"
        )
    if _SCHEME.match(where):
        name = where.partition(":")[0]
        hint = "" if "//" in where else f" (for a file whose name has a colon, write ./{where})"
        raise StoreUnavailable(
            f"unknown store scheme {name + ':'!r} in {shown_location(where)!r}: a store is "
            f"{accepted_locations()}{hint}"
        )
    from preflight_fsm.store.sqlite import SqliteStore

    return SqliteStore(where, expire_after=expire_after, clock=clock, create=create)
