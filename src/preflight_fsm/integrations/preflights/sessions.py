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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from preflights.adapters.file_session import FileSessionAdapter
from preflights.application.ports.session import SessionAlreadyExistsError, SessionNotFoundError
from preflights.application.types import Session
from pydantic import ValidationError

from preflight_fsm.answered_by import ANSWERED_BY, SIGNED, AnsweredBy, Provenance
from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
)
from preflight_fsm.principal import principal_problem
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.store.base import SessionStore
from preflight_fsm.store.sessions import PREFLIGHTS_PREFIX

__all__ = [
    "KEY_PREFIX",
    "OWNER",
    "ROUNDS",
    "FsmFileSessionAdapter",
    "StoreSessionAdapter",
    "record_round",
    "recorded_provenance",
    "recorded_rounds",
    "recorded_sources",
]

KEY_PREFIX: Final = PREFLIGHTS_PREFIX
"""Store keys of Preflights sessions, apart from the engine's own sessions in the same store."""

ROUNDS: Final = "fsm_rounds"
"""The attribute (and JSON key) holding the engine's accepted rounds on a Preflights Session."""
SOURCES: Final = "fsm_round_sources"
"""The attribute (and JSON key) holding who supplied each accepted round (``answered_by``)."""
PRINCIPALS: Final = "fsm_round_principals"
"""The attribute (and JSON key) holding each accepted round's authenticated caller, or null."""
PROOFS: Final = "fsm_round_proofs"
"""The attribute (and JSON key) holding each accepted round's passkey proof (its JSON), or null."""
OWNER: Final = "fsm_owner"
"""The attribute (and JSON key) holding the principal that started the session, or null."""
_VERSION_READ: Final = "fsm_version_read"  # on a Session: the store version it was read at


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


def recorded_provenance(session: Session) -> tuple[Provenance, ...]:
    """Who supplied each accepted round, one per round: its source, principal and proof as far
    as they were kept (a round kept before them: ``unknown``, or no principal and proof). A
    kept principal or proof that is not valid is dropped with its source (``unknown``)."""
    rounds = len(recorded_rounds(session))
    sources = recorded_sources(session)
    principals = tuple(getattr(session, PRINCIPALS, ()))
    proofs = tuple(getattr(session, PROOFS, ()))
    kept: list[Provenance] = []
    for i in range(rounds):
        source: AnsweredBy = sources[i] if i < len(sources) else "unknown"
        principal = principals[i] if i < len(principals) else None
        proof = _proof(proofs[i] if i < len(proofs) else None)
        if (principal is not None and principal_problem(principal) is not None) or (
            (source == SIGNED) != (proof is not None)
        ):
            kept.append(Provenance("unknown"))
            continue
        kept.append(Provenance(source, principal, proof))
    return tuple(kept)


def _proof(value: object) -> PasskeyProof | None:
    if isinstance(value, PasskeyProof) or value is None:
        return value
    try:
        return PasskeyProof.model_validate(value)
    except ValidationError:
        return None


def record_round(
    session: Session, answers: dict[str, Any], answered_by: AnsweredBy | Provenance = "api"
) -> None:
    """Append one accepted round's answers, supplied by ``answered_by`` (a source, or a
    :class:`Provenance` with the principal and proof), to the session."""
    kept = (*recorded_provenance(session), Provenance.of(answered_by))
    setattr(session, ROUNDS, (*recorded_rounds(session), dict(answers)))
    setattr(session, SOURCES, tuple(p.answered_by for p in kept))
    setattr(session, PRINCIPALS, tuple(p.principal for p in kept))
    setattr(session, PROOFS, tuple(None if p.proof is None else p.proof.model_dump() for p in kept))


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
        data[PRINCIPALS] = list(getattr(session, PRINCIPALS, ()))
        data[PROOFS] = list(getattr(session, PROOFS, ()))
        data[OWNER] = getattr(session, OWNER, None)
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
        for key in (PRINCIPALS, PROOFS):
            kept_list = data.get(key)
            setattr(session, key, tuple(kept_list) if isinstance(kept_list, list) else ())
        owner = data.get(OWNER)
        setattr(session, OWNER, owner if isinstance(owner, str) else None)
        return session


class StoreSessionAdapter:
    """Preflights' ``SessionPort`` on a preflight-fsm store: durable, and written by version.

    An update writes only over the version its session object was read at (compare-and-set), so
    of two rounds answering the same session at once, in two processes or in two requests of one
    server, one gets ``SessionConflict`` and nothing of its round is written. The version travels
    with the object ``get`` returned, never in a map the adapter shares across requests: a map
    would let a second request write with the version the first one stored (issue 30).
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        owner: Callable[[], str | None] | None = None,
        may_use: Callable[[str | None], bool] | None = None,
    ) -> None:
        self.store = store
        self._codec = FsmFileSessionAdapter(Path("unused"))  # its JSON form, never its files
        # A server with authentication (mcp/auth.py): who starts a session now, and whether
        # the caller may use a session that owner started (else it reads as not found).
        self._owner = owner
        self._may_use = may_use

    def create(self, session: Session) -> None:
        """Store a new session; SessionAlreadyExistsError if its id is taken."""
        if self._owner is not None:
            setattr(session, OWNER, self._owner())
        try:
            record = self.store.create(_key(session.id), self._dump(session))
        except SessionConflict as exc:
            raise SessionAlreadyExistsError(f"Session {session.id} already exists") from exc
        setattr(session, _VERSION_READ, record.version)

    def get(self, session_id: str) -> Session | None:
        """The session, or None when there is none (never created, ended, expired or unreadable)."""
        try:
            record = self.store.get(_key(session_id))
            session = self._codec._deserialize_session(_loads(record.snapshot))
        except (SessionNotFound, SessionExpired, CorruptSession, ValueError, KeyError, TypeError):
            return None
        if self._may_use is not None and not self._may_use(getattr(session, OWNER, None)):
            return None  # exactly as a session never started
        setattr(session, _VERSION_READ, record.version)
        return session

    def update(self, session: Session) -> None:
        """Write the session over the version read; SessionNotFoundError, SessionConflict."""
        version = getattr(session, _VERSION_READ, None)
        if not isinstance(version, int):
            raise SessionNotFoundError(f"Session {session.id} not found")
        try:
            record = self.store.put(_key(session.id), self._dump(session), version)
        except (SessionNotFound, SessionExpired) as exc:
            raise SessionNotFoundError(f"Session {session.id} not found") from exc
        setattr(session, _VERSION_READ, record.version)

    def delete(self, session_id: str) -> None:
        """Remove the session; nothing happens when there is none."""
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
