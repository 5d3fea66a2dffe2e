"""Stored sessions as the CLI, tests and workers use them: start, answer, show, list, delete.

:class:`Sessions` ties a :class:`~preflight_fsm.store.base.SessionStore` to the engine. A step
loads the snapshot, restores the machine, steps it and writes the new snapshot back with
compare-and-set on the version it loaded, so a snapshot is written only after a whole ``step``
succeeded, and of two processes stepping the same version only one writes (the other gets
SessionConflict).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from preflight_fsm.errors import (
    CorruptSession,
    InvalidSnapshot,
    SessionExpired,
    SessionNotFound,
)
from preflight_fsm.flow import Flow
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.store.base import SessionStore, StoredSession
from preflight_fsm.turn import Turn

__all__ = ["SessionState", "Sessions", "new_session_id"]


def new_session_id() -> str:
    """A fresh random session id (UUID4): unguessable, and unique across hosts."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class SessionState:
    """A stored session as restored: its id, the version read, and where it stands."""

    id: str
    version: int
    intention: str
    answers: Mapping[str, str]
    turn: Turn
    updated_at: float
    expires_at: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable view, as ``--json`` prints it."""
        turn = self.turn.model_dump(mode="json")
        turn["finished"] = self.turn.finished
        return {
            "session_id": self.id,
            "version": self.version,
            "intention": self.intention,
            "answers": dict(self.answers),
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "turn": turn,
        }


class Sessions:
    """Clarification sessions kept in ``store``; ``new_id`` makes the ids (injectable for tests)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        flow: Flow | None = None,
        new_id: Callable[[], str] = new_session_id,
    ) -> None:
        self.store = store
        self.flow = flow
        self.new_id = new_id

    def start(self, intention: str) -> SessionState:
        """Start a session and store it at version 1. Raises InvalidIntention."""
        machine = ClarificationMachine(intention, self.flow)
        record = self.store.create(self.new_id(), _dump(machine))
        return self._state(record, machine)

    def answer(self, session_id: str, answers: Mapping[str, Any]) -> SessionState:
        """Step the stored session once and write it back if nobody else did first.

        Raises InvalidAnswers or SessionFinished (nothing written), SessionConflict (another
        writer stepped this version first; nothing written), SessionNotFound, SessionExpired,
        CorruptSession.
        """
        machine, record = self.load(session_id)
        machine.step(answers)
        return self._state(self.save(session_id, machine, record.version), machine)

    def show(self, session_id: str) -> SessionState:
        """Where the session stands. Raises SessionNotFound, SessionExpired, CorruptSession."""
        machine, record = self.load(session_id)
        return self._state(record, machine)

    def list(self) -> list[SessionState | CorruptSession]:
        """Every live session, sorted by id; a corrupt one as its CorruptSession, not raised."""
        found: list[SessionState | CorruptSession] = []
        for session_id in self.store.list():
            try:
                found.append(self.show(session_id))
            except CorruptSession as exc:
                found.append(exc)
            except (SessionNotFound, SessionExpired):
                continue  # deleted or expired since it was listed
        return found

    def delete(self, session_id: str) -> None:
        """Remove the session (a corrupt or expired one too). Raises SessionNotFound."""
        self.store.delete(session_id)

    # -- for callers that step the machine themselves (an interactive chat, a worker) ------------

    def load(self, session_id: str) -> tuple[ClarificationMachine, StoredSession]:
        """The restored machine and the record it came from (whose version ``save`` expects)."""
        record = self.store.get(session_id)
        return self.restore(record), record

    def save(
        self, session_id: str, machine: ClarificationMachine, expected_version: int
    ) -> StoredSession:
        """Write ``machine``'s snapshot if the stored version is still ``expected_version``."""
        return self.store.put(session_id, _dump(machine), expected_version)

    def restore(self, record: StoredSession) -> ClarificationMachine:
        """The machine a stored snapshot holds; CorruptSession if it is refused (C9)."""
        try:
            # Every snapshot this package writes carries a digest: a row without was rewritten.
            return ClarificationMachine.from_snapshot(
                record.snapshot, self.flow, require_digest=True
            )
        except InvalidSnapshot as exc:
            raise CorruptSession(record.id, str(exc)) from exc

    def _state(self, record: StoredSession, machine: ClarificationMachine) -> SessionState:
        return SessionState(
            id=record.id,
            version=record.version,
            intention=machine.intention,
            answers=machine.answers,
            turn=machine.turn,
            updated_at=record.updated_at,
            expires_at=record.updated_at + self.store.expire_after,
        )


def _dump(machine: ClarificationMachine) -> str:
    return machine.snapshot().model_dump_json()
