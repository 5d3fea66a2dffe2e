"""Preflights sessions kept between processes: in ``pf``'s files, or in preflight-fsm's stores.

Preflights' ``FileSessionAdapter`` (what ``pf`` uses) drops the answers Preflights pre-fills from
the intention ("Add OAuth login" → OAuth) and what it detected, so a later process replays the
session without them. :class:`FsmFileSessionAdapter` keeps them, and the engine's accepted
rounds (:func:`recorded_rounds`); :class:`StoreSessionAdapter`
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

from preflight_fsm.answered_by import ANSWERED_BY, AnsweredBy
from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
)
from preflight_fsm.store.base import SessionStore
from preflight_fsm.store.sessions import PREFLIGHTS_PREFIX

__all__ = [
    "KEY_PREFIX",
    "ROUNDS",
    "FsmFileSessionAdapter",
    "StoreSessionAdapter",
    "record_round",
    "recorded_rounds",
    "recorded_sources",
]

KEY_PREFIX: Final = PREFLIGHTS_PREFIX
"""Store keys of Preflights sessions, apart from the engine's own sessions in the same store."""

ROUNDS: Final = "fsm_rounds"
"""The attribute (and JSON key) holding the engine's accepted rounds on a Preflights Session."""
SOURCES: Final = "fsm_round_sources"
"""The attribute (and JSON key) holding who supplied each accepted round (``answered_by``)."""


def recorded_rounds(session: Session) -> tuple[dict[str, Any], ...]:
    """The answers of each round the engine accepted, in order (C9's steps); () if none kept.

    Preflights' ``Session`` has no field for them, so they ride as an attribute that these
    adapters (and Preflights' in-memory one, which keeps the object) preserve; an adapter that
    drops them leaves the engine replaying the flat answers alone.
    """
    rounds = getattr(session, ROUNDS, ())
    return tuple(dict(r) for r in rounds if isinstance(r, dict))


def recorded_sources(session: Session) -> tuple[AnsweredBy, ...]:
    """Who supplied each accepted round (C9's ``answered_by``), as far as they were kept; a
    round kept before this was recorded has none (the caller's default applies)."""
    sources = getattr(session, SOURCES, ())
    return tuple(s for s in sources if s in ANSWERED_BY)


def record_round(
    session: Session, answers: dict[str, Any], answered_by: AnsweredBy = "api"
) -> None:
    """Append one accepted round's answers, supplied by ``answered_by``, to the session."""
    sources = recorded_sources(session)
    # A round without a kept source (recorded before sources were) is unknown, so that the
    # rounds and their sources stay aligned.
    unknown: tuple[AnsweredBy, ...] = ("unknown",)
    sources += unknown * (len(recorded_rounds(session)) - len(sources))
    setattr(session, ROUNDS, (*recorded_rounds(session), dict(answers)))
    setattr(session, SOURCES, (*sources, answered_by))


class FsmFileSessionAdapter(FileSessionAdapter):
    """Preflights' file sessions (``~/.preflights/sessions``), keeping the pre-filled answers."""

    def _serialize_session(self, session: Session) -> dict[str, Any]:
        data = super()._serialize_session(session)
        data["prefilled_answers"] = {
            k: list(v) if isinstance(v, tuple) else v for k, v in session.prefilled_answers.items()
        }
        data["detected_from_intent"] = [list(pair) for pair in session.detected_from_intent]
        data[ROUNDS] = [
            {k: list(v) if isinstance(v, tuple) else v for k, v in r.items()}
            for r in recorded_rounds(session)
        ]
        data[SOURCES] = list(recorded_sources(session))
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
        rounds = [dict(r) for r in data.get(ROUNDS) or () if isinstance(r, dict)]
        kept = data.get(SOURCES)
        sources = [s for s in kept if s in ANSWERED_BY] if isinstance(kept, list) else []
        if len(sources) != len(rounds):  # kept before sources were, or damaged: not known
            sources = ["unknown"] * len(rounds)
        setattr(session, ROUNDS, tuple(rounds))
        setattr(session, SOURCES, tuple(sources))
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
