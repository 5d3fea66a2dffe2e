"""The SQLite store's layout: its table, how a file is known to be a store, and its reclaim.

``store/sqlite.py`` opens and writes stores of this layout; a store of another layout is refused.
"""

from __future__ import annotations

from typing import Final

from preflight_fsm.store import wal as _wal

__all__ = ["APPLICATION_ID", "RECLAIM", "SCHEMA", "SCHEMA_VERSION"]

APPLICATION_ID: Final = 0x5046534D
"""``PRAGMA application_id`` of every session store ("PFSM"): how a file is known to be one."""

SCHEMA_VERSION: Final = 2
"""``PRAGMA user_version`` of the layout below; a store of another version is refused."""

SCHEMA = (
    """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    expire_after REAL NOT NULL,
    flow TEXT NOT NULL
);
CREATE INDEX sessions_by_flow ON sessions (flow);
"""
    + _wal.STATE_TABLE
)
"""Not a STRICT table on purpose: a row another tool wrote with wrong types must be readable
enough to be reported as corrupt (CorruptSession) rather than break the whole file.
"""

RECLAIM: Final = """
DELETE FROM sessions WHERE rowid IN (
    SELECT rowid FROM sessions
    WHERE typeof(updated_at) IN ('integer', 'real') AND typeof(expire_after) IN ('integer', 'real')
        AND expire_after > 0 AND ? - updated_at >= expire_after
    LIMIT ?
)
"""
"""Removes up to ``?`` (2nd) sessions expired at ``?`` (1st), as ``SessionStore.is_expired``
says; a row with unreadable times stays, reported as corrupt by whoever reads it."""
