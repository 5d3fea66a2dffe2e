"""The SQLite store's write-ahead log guards: a deleted store's log, a copy made without it.

Committed steps live in ``sessions.sqlite3-wal`` until a checkpoint folds them into the file, so
the file alone is not the store while any process writes. Two mistakes then lose or resurrect
steps silently, and both are refused instead (docs/sessions.md):

- deleting the file while its ``-wal`` remains: SQLite would replay that log into the next store
  made under the name (:func:`refuse_orphaned_wal`);
- copying the file without its ``-wal``: the copy holds older sessions, or none
  (:func:`refuse_copy_without_wal`).

The copy is recognised by the one row of ``store_state``: before a write's steps reach the
``-wal``, the file itself is marked in use (:func:`mark_in_use`: a commit, then a checkpoint that
folds it into the file), with the file's device and inode; the last process to close the store
clears it once every step is in the file (:func:`mark_not_in_use`). A file marked in use by
another file, with no ``-wal`` beside it, is a copy made without its log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final

from preflight_fsm.errors import StoreUnavailable

__all__ = [
    "STATE_TABLE",
    "has_content",
    "has_state_table",
    "in_use",
    "mark_in_use",
    "mark_not_in_use",
    "refuse_copy_without_wal",
    "refuse_orphaned_wal",
    "wal_of",
]

STATE_TABLE: Final = """
CREATE TABLE IF NOT EXISTS store_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    in_use INTEGER NOT NULL,
    device INTEGER NOT NULL,
    inode INTEGER NOT NULL
);
"""
"""The copy marker; stores made before it gain it on their first write."""

Identity = tuple[int, int]
"""A file's (device, inode)."""

Transaction = Callable[[], AbstractContextManager[None]]
"""The store's ``BEGIN IMMEDIATE`` ... ``COMMIT`` block."""


def wal_of(path: Path) -> Path:
    """The write-ahead log of the store at ``path``."""
    return path.with_name(path.name + "-wal")


def has_content(path: Path) -> bool:
    """True when ``path`` is a file holding at least one byte (an empty log holds no step)."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def refuse_orphaned_wal(path: Path) -> None:
    """StoreUnavailable when ``path`` is gone but its ``-wal`` holds steps (a deleted store)."""
    wal = wal_of(path)
    # path is looked at again after the log: another process may have just created the store
    # (it creates the file before its log), and then the log is that new store's own.
    if not has_content(wal) or path.exists():
        return
    raise StoreUnavailable(
        f"the session store {str(path)!r} was deleted, but its write-ahead log {str(wal)!r} "
        "remains and holds steps of the deleted sessions; to start afresh, delete it (and the "
        "-shm file beside it); to get the sessions back, put the deleted file back beside it"
    )


def has_state_table(db: sqlite3.Connection) -> bool:
    """True when the store has its ``store_state`` table."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'store_state'").fetchone()
    return found is not None


def refuse_copy_without_wal(db: sqlite3.Connection, path: Path, identity: Identity) -> None:
    """StoreUnavailable when ``path`` (opened without a ``-wal`` beside it) says another file
    was in use: it is a copy made without that file's log, and lacks the log's steps."""
    row = db.execute("SELECT in_use, device, inode FROM store_state").fetchone()
    if row is None or not row[0] or tuple(row[1:]) == identity:
        # Not in use, or this very file, closed without clearing the mark (its log folded in).
        return
    raise StoreUnavailable(
        f"the session store {str(path)!r} is a copy of a store that was in use, made without "
        f"its write-ahead log {wal_of(path).name!r}: the steps that log held are missing, so "
        "its sessions would read as older or absent; copy the -wal file beside it too, or copy "
        'while no process uses the store, or with sqlite3 STORE ".backup COPY" '
        "(docs/sessions.md)"
    )


def in_use(db: sqlite3.Connection, identity: Identity) -> bool:
    """True when ``store_state`` says this very file is in use."""
    row = db.execute("SELECT in_use, device, inode FROM store_state").fetchone()
    return row is not None and bool(row[0]) and tuple(row[1:]) == identity


def mark_in_use(
    db: sqlite3.Connection, identity: Identity, transaction: Transaction, *, create: bool
) -> None:
    """Mark the file itself in use: a commit, then a FULL checkpoint folding it into the file
    (waiting, up to the store's timeout, for other processes' reads and writes)."""
    with transaction():
        if create:
            db.execute(STATE_TABLE)
        db.execute(
            "INSERT OR REPLACE INTO store_state (id, in_use, device, inode) VALUES (1, 1, ?, ?)",
            identity,
        )
    db.execute("PRAGMA wal_checkpoint(FULL)")


def mark_not_in_use(db: sqlite3.Connection, transaction: Transaction) -> None:
    """On close: clear the mark, then fold the whole log into the file.

    When another process still holds the store, the checkpoint stops short and the mark may not
    reach the file; that process's next write marks it in use again before its steps anyway.
    """
    with transaction():
        db.execute("UPDATE store_state SET in_use = 0")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
