"""C7: what one turn shows the user, as plain data: the engine's questions, a turn's fields, and
the turn as the command line prints it.

``turn.py``'s models (:class:`~preflight_fsm.turn.Turn`, ``Question``) are validated from these
only when the API asks for a turn, so a command that starts or answers a session never imports
pydantic (issue 32). Each named tuple has its model's fields in its model's order, with its
defaults (``tests/test_turn_data.py`` holds each pair equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from preflight_fsm.guards import choice_key
from preflight_fsm.patch_data import PatchData, patch_fields
from preflight_fsm.states import TERMINAL_STATES, Decided, StateName

if TYPE_CHECKING:
    from preflight_fsm.flow_data import Hint
    from preflight_fsm.session import Session

__all__ = [
    "TURN_FIELDS",
    "QuestionData",
    "TurnData",
    "missing_info_of",
    "turn_data",
    "turn_fields",
    "turn_values",
]


class QuestionData(NamedTuple):
    """One question of a turn: :class:`~preflight_fsm.turn.Question`'s fields."""

    id: str
    type: Literal["single_choice", "multi_choice", "free_text"]
    question: str
    options: tuple[str, ...] | None = None
    min_selections: int | None = None
    max_selections: int | None = None
    optional: bool = False
    depends_on_question_id: str | None = None
    depends_on_value: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As ``Question.model_dump(mode="json")`` gives it."""
        shown = self._asdict()
        if self.options is not None:
            shown["options"] = list(self.options)
        return shown


class TurnData(NamedTuple):
    """A session's position after a step: :class:`~preflight_fsm.turn.Turn`'s fields."""

    state: StateName
    questions: tuple[QuestionData, ...]
    missing_info: tuple[str, ...]
    decision_hint: Hint
    progress: float
    patch: PatchData | None
    number: int

    @property
    def finished(self) -> bool:
        """True in Done and NoPatch: the session takes no more answers."""
        return self.state in TERMINAL_STATES

    def to_json(self) -> dict[str, Any]:
        """As ``Turn.model_dump(mode="json")`` gives it (``tests/test_turn_data.py``)."""
        patch = self.patch
        return {
            "state": self.state,
            "questions": [q.to_json() for q in self.questions],
            "missing_info": list(self.missing_info),
            "decision_hint": self.decision_hint,
            "progress": self.progress,
            "patch": None
            if patch is None
            else {
                "category": patch.category,
                "fields": [list(pair) for pair in patch.fields],
                "references": [list(pair) for pair in patch.references],
            },
            "number": self.number,
        }


TURN_FIELDS: Final = TurnData._fields
"""Turn's field names, in the order :func:`turn_fields` gives their values."""


def missing_info_of(s: Session) -> tuple[str, ...]:
    """C7: the key the position waits for (never an ``__other`` id); none once Done."""
    if isinstance(s.position, Decided):
        return ()
    return (choice_key(s),)


def turn_fields(s: Session) -> tuple[Any, ...]:
    """C7: the value of every field of the turn a session's position shows, in Turn's order
    (``TURN_FIELDS``): the engine's own question tuple, and the patch as the fields its
    DecisionPatch is validated from."""
    position = s.position
    engine = s.engine
    category = position.category
    decided = isinstance(position, Decided)
    # 0.5 once the category is known, 0.0 while it is not; NoPatch keeps what it had.
    progress = 1.0 if decided else 0.0 if category is None else 0.5
    return (
        position.state,
        engine.questions(position),
        missing_info_of(s),
        engine.hints[category],
        progress,
        patch_fields(s) if decided else None,
        s.turn,
    )


def turn_values(s: Session) -> dict[str, Any]:
    """C7: every field of the turn a session's position shows, by name."""
    return dict(zip(TURN_FIELDS, turn_fields(s), strict=True))


def turn_data(s: Session) -> TurnData:
    """C7: the turn a session's position shows, as plain data (what ``turn.turn_of`` validates
    into a Turn)."""
    state, questions, missing, hint, progress, patch, number = turn_fields(s)
    return TurnData(
        state,
        questions,
        missing,
        hint,
        progress,
        None if patch is None else PatchData(**patch),
        number,
    )
