"""One session's record: its inputs so far and the position they lead to (C1, C9).

The shared machine of the session's flow (``engine.py``) reads and sets ``state``; a session is
never registered on it. ``state`` is read off the position (``states.py``): a transition's effect
moves the position, and transitions' own state change must name the same state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.states import ASKING_CATEGORY, Position, StateName

if TYPE_CHECKING:
    from preflight_fsm.engine import Engine
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.table import Edge

__all__ = ["Session", "StepInput", "TraceEntry"]

StepInput = dict[str, str | None]
"""One accepted step's answers as normalised (None: given blank), the session's inputs (C9)."""

TraceEntry = tuple[int, "Edge"]
"""A transition taken: the step it was taken in (0 = the session's start) and its edge."""


class Session:
    """One session's data. Never shared between machines; a step works on a copy
    (:meth:`stepped`)."""

    __slots__ = (
        "answered_by",
        "answers",
        "asked",
        "declined",
        "engine",
        "intention",
        "named_category",
        "owner",
        "position",
        "provenance",
        "steps",
        "trace",
        "turn",
    )

    def __init__(self, engine: Engine, intention: str, owner: str | None = None) -> None:
        self.engine = engine
        self.intention = intention
        self.owner = owner  # the principal that started the session (None: unauthenticated)
        # C4: what the intention's words name, decided once: the shortcut guard and its effect
        # both read it, and it never changes.
        self.named_category = engine.keywords.only_category(intention)
        self.position: Position = ASKING_CATEGORY
        self.answers: dict[str, str] = {}  # recorded concrete answers, canonical choices
        self.turn = 0  # question turns asked so far
        # Tuples, never changed in place: a step's copy shares them until it adds to them, and
        # a live session holds no list's spare room (docs/performance.md).
        self.asked: tuple[str, ...] = ()
        self.trace: tuple[TraceEntry, ...] = ()
        self.steps: tuple[StepInput, ...] = ()
        # Who supplied each step's answers, in order: the channel; and the authenticated
        # caller (None: unauthenticated) with, for a user_passkey step, the passkey proof, one
        # pair per step, or () while every step was unauthenticated and unsigned: most sessions
        # hold nothing for what they never record, and a step pays one test (engine.py).
        self.answered_by: tuple[AnsweredBy, ...] = ()
        self.provenance: tuple[tuple[str | None, PasskeyProof | None], ...] = ()
        self.declined = False  # the pending question was answered blank in this step

    @property
    def principals(self) -> tuple[str | None, ...]:
        """The authenticated caller of each step, in order (None: unauthenticated)."""
        if not self.provenance:
            return (None,) * len(self.steps)
        return tuple(principal for principal, _ in self.provenance)

    @property
    def proofs(self) -> tuple[PasskeyProof | None, ...]:
        """The passkey proof of each step, in order (a user_passkey step's; else None)."""
        if not self.provenance:
            return (None,) * len(self.steps)
        return tuple(proof for _, proof in self.provenance)

    @property
    def state(self) -> StateName:
        """The state's name, read off the position."""
        return self.position.state

    @state.setter
    def state(self, value: Any) -> None:
        # transitions sets the destination after the transition's effect moved the position;
        # a row whose effect leads elsewhere is a broken table, not a session to go on with.
        if value != self.position.state:
            raise RuntimeError(
                f"the transition's effect moved to {self.position.state}, not to {value}"
            )

    def stepped(
        self,
        answers: dict[str, str],
        declined: bool,
        given: StepInput,
        answered_by: AnsweredBy,
        principal: str | None,
        proof: PasskeyProof | None,
    ) -> Session:
        """A copy with one more step's inputs and the ``answers`` they record, for the step to
        move on (``engine.py``); this session is never changed."""
        copy = Session.__new__(Session)
        copy.engine = self.engine
        copy.intention = self.intention
        copy.owner = self.owner
        copy.named_category = self.named_category
        copy.position = self.position
        copy.answers = answers
        copy.turn = self.turn
        copy.asked = self.asked
        copy.trace = self.trace
        copy.steps = (*self.steps, given)
        copy.answered_by = (*self.answered_by, answered_by)
        held = self.provenance
        if held or principal is not None or proof is not None:  # else () stands for each step's
            held = (*(held or ((None, None),) * len(self.steps)), (principal, proof))
        copy.provenance = held
        copy.declined = declined
        return copy
