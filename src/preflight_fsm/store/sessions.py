"""Stored sessions as the CLI, tests and workers use them: start, answer, show, list, delete.

:class:`Sessions` ties a :class:`~preflight_fsm.store.base.SessionStore` to the engine. A step
loads the snapshot, restores the machine, steps it and writes the new snapshot back with
compare-and-set on the version it loaded, so a snapshot is written only after a whole ``step``
succeeded, and of two processes stepping the same version only one writes (the other gets
SessionConflict).

What is stored is the snapshot in an envelope naming the session it belongs to,
``{"session_id": "<id>", "snapshot": {...}}``: a row copied under another id (a Redis hash copied
to a new key, a damaged index answering with another row) is refused as corrupt, never run as a
second live session.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from preflight_fsm.answered_by import AnsweredBy, Source
from preflight_fsm.errors import (
    CorruptSession,
    InvalidSnapshot,
    SessionExpired,
    SessionNotFound,
    SnapshotFlowMismatch,
)
from preflight_fsm.flow_registry import FlowRegistry, default_registry
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.migration import Divergence
from preflight_fsm.snapshot import SealKeys
from preflight_fsm.store.base import SessionStore, StoredSession
from preflight_fsm.turn_data import TurnData

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.session import Session
    from preflight_fsm.turn import Turn

__all__ = [
    "Moved",
    "SessionState",
    "Sessions",
    "StepRecord",
    "new_session_id",
    "open_envelope",
    "seal_envelope",
    "step_records",
]


PREFLIGHTS_PREFIX: Final = "preflights-"
"""Ids of the sessions Preflights' own application keeps in the same store (``preflight-fsm pf``,
``mcp --preflights``: integrations/preflights/sessions.py). They are not clarification sessions
of this service: listing and migrating leave them out; their commands read them."""


def new_session_id() -> str:
    """A fresh random session id (UUID4): unguessable, and unique across hosts."""
    return str(uuid.uuid4())


def seal_envelope(session_id: str, snapshot_json: str) -> str:
    """The stored text of ``snapshot_json`` for ``session_id``: the snapshot in its envelope."""
    # Session ids are plain ASCII (SESSION_ID_PATTERN): json.dumps gives them canonically, so the
    # envelope is opened by comparing a prefix, without parsing the snapshot twice.
    return f'{{"session_id": {json.dumps(session_id)}, "snapshot": {snapshot_json}}}'


def open_envelope(session_id: str, stored: str) -> str:
    """The snapshot JSON inside ``stored``; CorruptSession if it belongs to another session."""
    prefix = f'{{"session_id": {json.dumps(session_id)}, "snapshot": '
    if stored.startswith(prefix) and stored.endswith("}"):
        return stored[len(prefix) : -1]
    try:
        owner = json.loads(stored).get("session_id")
    except (ValueError, AttributeError, RecursionError):
        owner = None
    if isinstance(owner, str) and owner != session_id:
        raise CorruptSession(
            session_id, f"its snapshot belongs to session {owner!r} (copied under another id)"
        )
    raise CorruptSession(session_id, "its stored text is not a session envelope")


@dataclass(frozen=True, slots=True)
class SessionState:
    """A stored session as restored: its id, the version read, and where it stands (its turn as
    plain data; :attr:`turn` is the model)."""

    id: str
    version: int
    intention: str
    answers: Mapping[str, str]
    turn_data: TurnData
    updated_at: float
    expires_at: float
    created_at: float | None = None
    flow: str = ""
    steps: tuple[StepRecord, ...] = ()
    decided_by: tuple[tuple[str, Source], ...] = ()
    owner: str | None = None
    # The session it was read from: :attr:`turn` is its Turn, one of those its engine shares.
    _session: Session | None = field(default=None, repr=False, compare=False)

    @property
    def turn(self) -> Turn:
        """Where the session stands, as the public model (the Turn :attr:`turn_data` holds)."""
        from preflight_fsm.turn import turn_from_data, turn_of  # the API's models, not a command's

        session = self._session
        return turn_from_data(self.turn_data) if session is None else turn_of(session)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable view, as ``--json`` prints it."""
        turn = self.turn_data.to_json()
        turn["finished"] = self.turn_data.finished
        return {
            "session_id": self.id,
            "version": self.version,
            "intention": self.intention,
            "answers": dict(self.answers),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "flow_fingerprint": self.flow,
            "owner": self.owner,
            "turn": turn,
            "steps": [step.to_json() for step in self.steps],
            "decided_by": dict(self.decided_by),
        }


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One accepted step: its number (1 = the first), who supplied its answers (the channel,
    the authenticated caller, the passkey proof), and the answers as it recorded them (None:
    given blank)."""

    step: int
    answered_by: AnsweredBy
    answers: Mapping[str, str | None]
    principal: str | None = None
    proof: PasskeyProof | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"step", "answered_by", "principal", "proof", "answers"}``."""
        return {
            "step": self.step,
            "answered_by": self.answered_by,
            "principal": self.principal,
            "proof": None if self.proof is None else self.proof.model_dump(),
            "answers": dict(self.answers),
        }


def step_records(machine: ClarificationMachine) -> tuple[StepRecord, ...]:
    """The machine's accepted steps, each with who supplied it (C9)."""
    provenance = zip(
        machine.steps, machine.answered_by, machine.principals, machine.proofs, strict=True
    )
    return tuple(
        StepRecord(i, source, given, principal, proof)
        for i, (given, source, principal, proof) in enumerate(provenance, start=1)
    )


@dataclass(frozen=True, slots=True)
class Moved:
    """What a migration did to one stored session (C10)."""

    session_id: str
    from_flow: str
    migrated: bool
    divergence: Divergence | None = None
    problem: str | None = None  # the session could not be read or written

    def to_json(self) -> dict[str, Any]:
        """As ``migrate --json`` prints it."""
        d = self.divergence
        return {
            "session_id": self.session_id,
            "from_flow": self.from_flow,
            "migrated": self.migrated,
            "divergence": None
            if d is None
            else {"step": d.step, "field": d.field, "before": d.before, "after": d.after},
            "problem": self.problem,
        }


class Sessions:
    """Clarification sessions kept in ``store``; ``new_id`` makes the ids (injectable for tests).

    ``flow`` is the flow new sessions start on, or a FlowRegistry whose current flow they start
    on and whose earlier flows stored sessions may still run on (C10); the default flow when
    None. A stored session of an unregistered flow is refused with SnapshotFlowMismatch. With
    ``keys`` (C11), snapshots are written sealed and read only when sealed under one of them.
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        flow: Flow | FlowRegistry | None = None,
        keys: SealKeys | None = None,
        new_id: Callable[[], str] = new_session_id,
    ) -> None:
        self.store = store
        if flow is None:
            self.flows = default_registry()
        else:
            self.flows = flow if isinstance(flow, FlowRegistry) else FlowRegistry(flow)
        self.keys = keys
        self.new_id = new_id

    @property
    def flow(self) -> Flow:
        """The flow new sessions start on (the registry's current one)."""
        return self.flows.current

    def start(
        self, intention: str, *, expire_after: float | None = None, owner: str | None = None
    ) -> SessionState:
        """Start a session for ``owner`` (the authenticated principal; None: unauthenticated)
        and store it at version 1, with its own expiry (else the store's default) and its
        flow's fingerprint. Raises InvalidIntention, or InvalidAnswers naming ``owner``."""
        machine = ClarificationMachine(intention, self.flows.current_data, owner)
        return self.state_of(self.create(machine, expire_after=expire_after), machine)

    def create(
        self, machine: ClarificationMachine, *, expire_after: float | None = None
    ) -> StoredSession:
        """Store ``machine`` (new, or already stepped) as a new session at version 1, under a new
        id, with its flow's fingerprint and its own expiry (else the store's default); its owner
        is the machine's (``ClarificationMachine(..., owner=...)``)."""
        session_id = self.new_id()
        return self.store.create(
            session_id,
            seal_envelope(session_id, self._dump(machine)),
            expire_after=expire_after,
            flow=machine.flow_data.fingerprint,
        )

    def answer(
        self,
        session_id: str,
        answers: Mapping[str, Any],
        answered_by: AnsweredBy = "api",
        *,
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> SessionState:
        """Step the stored session once, its answers supplied by ``answered_by`` through
        ``principal`` with ``proof`` (C9, as ``ClarificationMachine.step``), and write it back
        if nobody else did first.

        Raises InvalidAnswers or SessionFinished (nothing written), SessionConflict (another
        writer stepped this version first; nothing written), SessionNotFound, SessionExpired,
        CorruptSession.
        """
        machine, record = self.load(session_id)
        machine.advance(answers, answered_by, principal=principal, proof=proof)
        return self.state_of(self.save(session_id, machine, record.version), machine)

    def show(self, session_id: str) -> SessionState:
        """Where the session stands. Raises SessionNotFound, SessionExpired, CorruptSession."""
        machine, record = self.load(session_id)
        return self.state_of(record, machine)

    def list(self) -> list[SessionState | CorruptSession | SnapshotFlowMismatch]:
        """Every live session, sorted by id; one that cannot be restored as its error, not raised:
        CorruptSession, or SnapshotFlowMismatch (with ``.session_id``) for one whose flow is not
        registered (C10: that is no corruption). Writes nothing: expired sessions are left out.
        """
        found: list[SessionState | CorruptSession | SnapshotFlowMismatch] = []
        for session_id in self.store.list():
            if session_id.startswith(PREFLIGHTS_PREFIX):
                continue
            try:
                found.append(self.show(session_id))
            except SnapshotFlowMismatch as exc:
                exc.session_id = session_id
                found.append(exc)
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
        return self.store.put(
            session_id, seal_envelope(session_id, self._dump(machine)), expected_version
        )

    def migrate(self, target: Flow | None = None, *, force: bool = False) -> builtins.list[Moved]:
        """Move every stored session that runs on another flow than ``target`` (the current flow
        by default) by replaying its inputs there (C10). A session whose outcome would differ
        stays where it is unless ``force``; one ``target`` refuses always stays. Reads only the
        sessions that need it: the store keeps each session's flow."""
        flow = target or self.flows.current
        moved: builtins.list[Moved] = []
        for entry in self.store.entries():
            if isinstance(entry, CorruptSession) or entry.flow in flow.fingerprints:
                continue
            if entry.id.startswith(PREFLIGHTS_PREFIX):
                continue
            try:
                machine, record = self.load(entry.id)
                result = machine.migrate(flow, force=force)
                if result.machine is not None:
                    self.store.put(
                        entry.id,
                        seal_envelope(entry.id, self._dump(result.machine)),
                        record.version,
                        flow=flow.fingerprint,
                    )
                moved.append(Moved(entry.id, entry.flow, result.migrated, result.divergence))
            except (CorruptSession, SnapshotFlowMismatch, SessionNotFound, SessionExpired) as exc:
                moved.append(Moved(entry.id, entry.flow, False, problem=str(exc)))
        return moved

    def _dump(self, machine: ClarificationMachine) -> str:
        return machine.snapshot_json(seal=self.keys)

    def snapshot_json(self, record: StoredSession) -> str:
        """The snapshot JSON a stored session holds, out of its envelope (CorruptSession)."""
        return open_envelope(record.id, record.snapshot)

    def restore(self, record: StoredSession) -> ClarificationMachine:
        """The machine a stored snapshot holds; CorruptSession if it is refused (C9), and
        SnapshotFlowMismatch if the session runs on another flow than this service's."""
        snapshot = self.snapshot_json(record)
        try:
            # Every snapshot this package writes carries a digest: a row without was rewritten.
            return ClarificationMachine.from_snapshot(
                snapshot, self.flows, require_digest=True, keys=self.keys
            )
        except SnapshotFlowMismatch:
            raise
        except InvalidSnapshot as exc:
            raise CorruptSession(record.id, str(exc)) from exc
        except RecursionError:
            raise CorruptSession(record.id, "its snapshot is nested too deeply") from None

    def state_of(self, record: StoredSession, machine: ClarificationMachine) -> SessionState:
        """The SessionState of ``record`` restored as ``machine``."""
        return SessionState(
            id=record.id,
            version=record.version,
            intention=machine.intention,
            answers=machine.answers,
            turn_data=machine.turn_data,
            created_at=record.created_at,
            updated_at=record.updated_at,
            expires_at=record.expires_at,
            flow=record.flow,
            steps=step_records(machine),
            decided_by=machine.decided_by,
            owner=machine.owner,
            _session=machine._session,
        )
