"""C7: what one turn shows the user (Question, LLMResponse, Turn), the public models, validated
from the plain data a position sets (``turn_data.py``).

Field names equal Preflights' dataclasses (``preflights.application.types``), so converting is
by name: ``PreflightsQuestion(**question.model_dump())``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from preflight_fsm.flow import Hint
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.states import TERMINAL_STATES, StateName
from preflight_fsm.turn_data import TURN_FIELDS, QuestionData, TurnData, turn_fields

if TYPE_CHECKING:
    from preflight_fsm.session import Session

__all__ = ["LLMResponse", "Question", "Turn", "questions_of", "turn_from_data", "turn_of"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Question(_Frozen):
    """One question of a turn."""

    id: str
    type: Literal["single_choice", "multi_choice", "free_text"]
    question: str
    options: tuple[str, ...] | None = None
    min_selections: int | None = None
    max_selections: int | None = None
    optional: bool = False
    depends_on_question_id: str | None = None
    depends_on_value: str | None = None


class LLMResponse(_Frozen):
    """The spec §9.1 answer of ``generate_questions``."""

    questions: tuple[Question, ...]
    missing_info: tuple[str, ...]
    decision_hint: Hint
    progress: float


class Turn(_Frozen):
    """A session's position after a step: what to ask, or the outcome.

    ``number`` counts the question turns asked so far (at most the flow's budget, C3).
    ``patch`` is set only in ``Done``.
    """

    state: StateName
    questions: tuple[Question, ...]
    missing_info: tuple[str, ...]
    decision_hint: Hint
    progress: float
    patch: DecisionPatch | None
    number: int

    @property
    def finished(self) -> bool:
        """True in Done and NoPatch: the session takes no more answers."""
        return self.state in TERMINAL_STATES

    def to_llm_response(self) -> LLMResponse:
        """This turn as the LLMResponse a Preflights core expects."""
        return LLMResponse(
            questions=self.questions,
            missing_info=self.missing_info,
            decision_hint=self.decision_hint,
            progress=self.progress,
        )


_PATCH = TURN_FIELDS.index("patch")


def turn_of(s: Session) -> Turn:
    """C7: the turn a session's position shows.

    Turns are frozen and most are alike (a few dozen per flow), so each engine keeps the ones it
    made, keyed by every field's value: a Turn is shared only with sessions that would build an
    equal one, whatever fields Turn gains (questions by identity: the engine's own tuples). Only
    turns without a patch are kept. A live session holds its turn, so sharing them is what keeps
    a session under 1 KB (docs/performance.md, D150).
    """
    fields = turn_fields(s)
    if fields[_PATCH] is not None:
        return _validated(fields)
    key = (fields[0], id(fields[1]), *fields[2:])
    turns = s.engine.turns
    turn = turns.get(key)
    if turn is None:
        turn = turns.setdefault(key, _validated(fields))
    return turn


def turn_from_data(data: TurnData) -> Turn:
    """C7: the Turn a turn's plain data holds."""
    patch = data.patch
    return _validated((*data[:5], None if patch is None else patch._asdict(), data.number))


def _validated(fields: tuple[Any, ...]) -> Turn:
    questions: tuple[QuestionData, ...] = fields[1]
    if questions:  # the engine's plain questions as models (a Done turn asks none)
        fields = (fields[0], questions_of(questions), *fields[2:])
    # Turn's own validator, called directly: Turn(**values) and model_validate add a third of
    # its cost in keyword handling (docs/performance.md, D153). It validates the patch too.
    # No strict zip (its keyword call was 1.6 k instructions of every Done turn, D302): a value
    # short is a required field missing, which the validator refuses, and tests/test_turn.py
    # holds turn_fields to one value per field.
    values = dict(zip(TURN_FIELDS, fields))  # noqa: B905 -- held equal in length, as above
    turn: Turn = Turn.__pydantic_validator__.validate_python(values)
    return turn


def questions_of(questions: tuple[QuestionData, ...]) -> tuple[Question, ...]:
    """The engine's plain questions (``engine.questions``) as models; it built them, so they
    validate."""
    return tuple(Question(**question._asdict()) for question in questions)
