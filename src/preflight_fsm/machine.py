"""ClarificationMachine: the public face of one session (C8).

The rules live elsewhere, each in the module named for it: the table (``table.py``), the guards
(``guards.py``), the shared machine and the step loop (``engine.py``), answers (``answers.py``),
patches (``patch.py``), turns (``turn.py``), snapshots (``snapshot/``), moving to another
flow (``migration.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from preflight_fsm import snapshot as _snapshot
from preflight_fsm.answered_by import (
    AnsweredBy,
    Source,
    answer_sources,
    decided_by,
    deciding_steps,
)
from preflight_fsm.engine import engine_for
from preflight_fsm.flow_data import DEFAULT_FLOW, FlowData
from preflight_fsm.flow_registry import FlowRegistry, default_registry
from preflight_fsm.migration import Divergence, migrate
from preflight_fsm.session import Session
from preflight_fsm.states import STATES, TERMINAL_STATES, StateName
from preflight_fsm.turn_data import TurnData, turn_data

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.turn import Turn

__all__ = ["ClarificationMachine", "Migration"]


class ClarificationMachine:
    """One clarification session, stepped through its flow's shared machine (C8).

    Steps on one machine are serialised: two threads stepping it at once each see the other's
    answers, so none is lost (the second may be refused, as any step on the new position may).

    >>> machine = ClarificationMachine("Add OAuth login")
    >>> machine.turn.state, [q.id for q in machine.turn.questions]
    ('NeedPrimaryField', ['auth_strategy', 'auth_strategy__other'])
    >>> machine.step({"auth_strategy": "OAuth"}).patch
    DecisionPatch(category='Authentication', fields=(('Strategy', 'OAuth'),), references=())
    """

    __slots__ = ("_lock", "_session", "_turn")

    states: ClassVar[tuple[StateName, ...]] = STATES

    def __init__(
        self, intention: str, flow: Flow | FlowData | None = None, owner: str | None = None
    ) -> None:
        """A new session on ``flow`` (the default flow if None; a model or its plain form),
        started by ``owner`` (the authenticated principal, recorded in the snapshot; None:
        unauthenticated). Raises InvalidIntention, or InvalidAnswers naming ``owner`` when it is
        not clean text (C5)."""
        self._session = engine_for(flow or DEFAULT_FLOW).begin(intention, owner)
        self._turn: Turn | None = None
        self._lock = threading.Lock()

    @classmethod
    def _of(cls, session: Session) -> ClarificationMachine:
        machine = cls.__new__(cls)
        machine._session = session
        machine._turn = None
        machine._lock = threading.Lock()
        return machine

    @property
    def flow(self) -> Flow:
        """The flow this session runs on (its model, built on first ask)."""
        return self._session.engine.flow

    @property
    def flow_data(self) -> FlowData:
        """:attr:`flow` as plain data (``flow_data.py``), what the engine runs on: the same
        fields and fingerprints, with no model built."""
        return self._session.engine.flow_data

    @property
    def intention(self) -> str:
        """The intention, as cleaned when the session started."""
        return self._session.intention

    @property
    def state(self) -> StateName:
        """The current state's name."""
        return self._session.position.state

    @property
    def finished(self) -> bool:
        """True once the session is in Done or NoPatch."""
        return self._session.position.state in TERMINAL_STATES

    @property
    def turn(self) -> Turn:
        """What the session shows now: the questions to ask, or the outcome."""
        turn = self._turn
        if turn is None:
            # Built under the step lock, so a step in another thread cannot pair this session's
            # turn with the next session.
            with self._lock:
                if self._turn is None:
                    self._turn = _turn_of(self._session)
                turn = self._turn
        return turn

    @property
    def answers(self) -> dict[str, str]:
        """The recorded answers (a copy): concrete, normalised, canonical options."""
        return dict(self._session.answers)

    @property
    def trace(self) -> tuple[_snapshot.TraceStep, ...]:
        """Every transition taken so far, in order."""
        return _snapshot.trace_of(self._session)

    @property
    def answered_by(self) -> tuple[AnsweredBy, ...]:
        """Who supplied each accepted step's answers, in order (C9; ``docs/contract.md``)."""
        return tuple(self._session.answered_by)

    @property
    def principals(self) -> tuple[str | None, ...]:
        """The authenticated caller of each accepted step (None: unauthenticated), in order."""
        return tuple(self._session.principals)

    @property
    def proofs(self) -> tuple[PasskeyProof | None, ...]:
        """The passkey proof of each accepted step (a ``user_passkey`` step's; else None)."""
        return tuple(self._session.proofs)

    @property
    def owner(self) -> str | None:
        """The principal that started the session (None: unauthenticated)."""
        return self._session.owner

    @property
    def steps(self) -> tuple[dict[str, str | None], ...]:
        """Each accepted step's answers as recorded (normalised; None: given blank), in order."""
        return tuple(dict(given) for given in self._session.steps)

    @property
    def answer_sources(self) -> dict[str, AnsweredBy]:
        """Who supplied each recorded answer (question id -> the source of its step)."""
        return answer_sources(self._session)

    @property
    def decided_by(self) -> tuple[tuple[str, Source], ...]:
        """Who supplied each value of the decision, ``("Category", ...)`` first; () until Done."""
        return decided_by(self._session)

    @property
    def deciding_steps(self) -> tuple[tuple[str, int | None], ...]:
        """The step (0-based) that supplied each value of the decision, ``("Category", ...)``
        first; None where the intention decided it; () until Done."""
        return deciding_steps(self._session)

    def step(
        self,
        answers: Mapping[str, Any],
        answered_by: AnsweredBy = "api",
        *,
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> Turn:
        """Record one turn's answers, supplied by ``answered_by``, and move on; on any error the
        session is unchanged.

        Recorded with the step (C9): ``answered_by`` (``user_form``, ``user_web``,
        ``user_passkey``, ``agent``, ``cli``, ``api`` -- a library call, the default -- or
        ``unknown``), ``principal`` (the authenticated caller; None: unauthenticated) and
        ``proof`` (the passkey assertion a ``user_passkey`` step needs, and only it may carry).
        Raises InvalidAnswers (with ``.feedback``) or SessionFinished.
        """
        with self._lock:
            session = self._session.engine.step(
                self._session, answers, answered_by, principal, proof
            )
            turn = _turn_of(session)
            self._session, self._turn = session, turn
        return turn

    @property
    def turn_data(self) -> TurnData:
        """:attr:`turn` as plain data (``turn_data.py``), read without building the model: what
        the command line prints."""
        return turn_data(self._session)

    def advance(
        self,
        answers: Mapping[str, Any],
        answered_by: AnsweredBy = "api",
        *,
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> None:
        """:meth:`step`, without building the Turn it returns (read :attr:`turn_data` or
        :attr:`turn` after): the command line's step, which never imports the models."""
        with self._lock:
            session = self._session.engine.step(
                self._session, answers, answered_by, principal, proof
            )
            self._session, self._turn = session, None

    def recorded_answers(self, answers: Mapping[str, Any]) -> dict[str, str | None]:
        """The answers ``step(answers)`` would record (normalised; None: given blank), without
        stepping: what a passkey signs for this step (``passkeys.py``). Raises what ``step``
        raises."""
        with self._lock:
            return dict(self._session.engine.step(self._session, answers).steps[-1])

    # -- snapshots (C9, C10, C11) ---------------------------------------------------------------

    def snapshot(self, *, seal: _snapshot.SealKeys | None = None) -> _snapshot.SessionSnapshot:
        """The session as data: its inputs, what they derive, a digest; sealed with ``seal``."""
        return _snapshot.snapshot_of(self._session, seal)

    def snapshot_json(self, *, seal: _snapshot.SealKeys | None = None) -> str:
        """:meth:`snapshot` as JSON text, the same text its ``model_dump_json()`` gives, written
        without building the model (what a store keeps)."""
        return _snapshot.snapshot_json(self._session, seal)

    @classmethod
    def from_snapshot(
        cls,
        snapshot: _snapshot.SessionSnapshot | str | bytes | dict[str, Any],
        flow: Flow | FlowData | FlowRegistry | None = None,
        *,
        require_digest: bool = False,
        keys: _snapshot.SealKeys | None = None,
    ) -> ClarificationMachine:
        """Restore a session by replaying its inputs; any refusal is InvalidSnapshot naming the
        field (C9).

        ``flow`` is the flow, or the registry of flows, sessions may run on (C10); by default the
        default flow. A full snapshot restores exactly; Preflights' four-field form restores to
        the position it names. ``require_digest`` refuses a snapshot without a digest; with
        ``keys``, an unsealed or wrongly sealed one is InvalidSeal (C11).
        """
        flows = _registry(flow)
        return cls._of(
            _snapshot.restore_session(snapshot, flows, require_digest=require_digest, keys=keys)
        )

    def migrate(self, target: Flow | FlowData, *, force: bool = False) -> Migration:
        """This session's inputs replayed on ``target`` (C10): the session there, or where it
        diverges. With ``force`` a diverging session is migrated all the same (one whose answers
        ``target`` refuses never is)."""
        session, divergence = migrate(self._session, engine_for(target), force=force)
        machine = None if session is None else ClarificationMachine._of(session)
        return Migration(machine, divergence)

    def __repr__(self) -> str:
        return f"<ClarificationMachine state={self.state} turn={self._session.turn}>"


@dataclass(frozen=True, slots=True)
class Migration:
    """A session moved to another flow (C10): the session there, and the first divergence."""

    machine: ClarificationMachine | None
    divergence: Divergence | None

    @property
    def migrated(self) -> bool:
        """True when the session now runs on the target flow."""
        return self.machine is not None


def _first_turn_of(session: Session) -> Turn:
    """``turn.turn_of``, its module (the pydantic models) imported when the first Turn is asked
    for, then bound in its place: a command that reads only plain turns never imports pydantic
    (issue 32), and a step pays no import statement for it (``instructions.step``)."""
    global _turn_of
    from preflight_fsm.turn import turn_of

    _turn_of = turn_of
    return turn_of(session)


_turn_of: Callable[[Session], Turn] = _first_turn_of


def _registry(flow: Flow | FlowData | FlowRegistry | None) -> FlowRegistry:
    if flow is None:
        return default_registry()
    return flow if isinstance(flow, FlowRegistry) else FlowRegistry(flow)
