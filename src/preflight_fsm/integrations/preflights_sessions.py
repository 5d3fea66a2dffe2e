"""Preflights sessions kept between processes: in ``pf``'s files, or in preflight-fsm's stores.

Preflights' ``FileSessionAdapter`` (what ``pf`` uses) drops the answers Preflights pre-fills from
the intention ("Add OAuth login" → OAuth) and what it detected, so a later process replays the
session without them. :class:`FsmFileSessionAdapter` keeps them; :class:`StoreSessionAdapter`
keeps the same JSON in a :class:`~preflight_fsm.store.SessionStore` (SQLite by default, Redis),
for servers whose sessions must outlive a restart.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Final

from preflights.adapters.file_session import FileSessionAdapter
from preflights.application.ports.session import SessionAlreadyExistsError, SessionNotFoundError
from preflights.application.types import Session

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
)
from preflight_fsm.store.base import SessionStore

__all__ = ["KEY_PREFIX", "FsmFileSessionAdapter", "StoreSessionAdapter"]

KEY_PREFIX: Final = "preflights-"
"""Store keys of Preflights sessions, apart from the engine's own sessions in the same store."""


class FsmFileSessionAdapter(FileSessionAdapter):
    """Preflights' file sessions (``~/.preflights/sessions``), keeping the pre-filled answers."""

    def _serialize_session(self, session: Session) -> dict[str, Any]:
        data = super()._serialize_session(session)
        data["prefilled_answers"] = {
            k: list(v) if isinstance(v, tuple) else v for k, v in session.prefilled_answers.items()
        }
        data["detected_from_intent"] = [list(pair) for pair in session.detected_from_intent]
        return data

    def _deserialize_session(self, data: dict[str, Any]) -> Session:
        session = super()._deserialize_session(data)
        session.prefilled_answers = {
            str(k): tuple(v) if isinstance(v, list) else v
            for k, v in dict(data.get("prefilled_answers") or {}).items()
        }
        session.detected_from_intent = tuple(
            (str(pair[0]), str(pair[1])) for pair in data.get("detected_from_intent") or ()
        )
        return session


class StoreSessionAdapter:
    """Preflights' ``SessionPort`` on a preflight-fsm store: durable, and written by version.

    An update writes only over the version this adapter read (compare-and-set), so of two
    processes answering the same session at once, one gets ``SessionConflict`` and nothing of
    its round is written.
    """

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._codec = FsmFileSessionAdapter(Path("unused"))  # its JSON form, never its files
        self._versions: dict[str, int] = {}

    def create(self, session: Session) -> None:
        """Store a new session; SessionAlreadyExistsError if its id is taken."""
        try:
            record = self.store.create(_key(session.id), self._dump(session))
        except SessionConflict as exc:
            raise SessionAlreadyExistsError(f"Session {session.id} already exists") from exc
        self._versions[session.id] = record.version

    def get(self, session_id: str) -> Session | None:
        """The session, or None when there is none (never created, ended, expired or unreadable)."""
        try:
            record = self.store.get(_key(session_id))
            session = self._codec._deserialize_session(_loads(record.snapshot))
        except (SessionNotFound, SessionExpired, CorruptSession, ValueError, KeyError, TypeError):
            return None
        self._versions[session_id] = record.version
        return session

    def update(self, session: Session) -> None:
        """Write the session over the version read; SessionNotFoundError, SessionConflict."""
        version = self._versions.get(session.id)
        if version is None:
            raise SessionNotFoundError(f"Session {session.id} not found")
        try:
            record = self.store.put(_key(session.id), self._dump(session), version)
        except (SessionNotFound, SessionExpired) as exc:
            raise SessionNotFoundError(f"Session {session.id} not found") from exc
        self._versions[session.id] = record.version

    def delete(self, session_id: str) -> None:
        """Remove the session; nothing happens when there is none."""
        self._versions.pop(session_id, None)
        with contextlib.suppress(SessionNotFound):
            self.store.delete(_key(session_id))

    def cleanup_expired(self, current_time: float) -> int:
        """The store expires sessions itself (30 minutes without a write): nothing to do."""
        return 0

    def _dump(self, session: Session) -> str:
        return json.dumps(self._codec._serialize_session(session), ensure_ascii=False)


def _key(session_id: str) -> str:
    return f"{KEY_PREFIX}{session_id}"


def _loads(text: str) -> dict[str, Any]:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a stored Preflights session is a JSON object")
    return data
