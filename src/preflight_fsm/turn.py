"""What one turn shows the user: Question, LLMResponse and Turn (C2, C7, C8).

Field names equal Preflights' dataclasses (``preflights.application.types``), so converting is
by name: ``PreflightsQuestion(**question.model_dump())``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from preflight_fsm.patch import DecisionPatch

__all__ = ["LLMResponse", "Question", "StateName", "Turn"]

Hint = Literal["task", "adr", "unsure"]
StateName = Literal["NeedCategory", "NeedPrimaryField", "NeedOther", "Done", "NoPatch"]


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
        return self.state in ("Done", "NoPatch")

    def to_llm_response(self) -> LLMResponse:
        """This turn as the LLMResponse a Preflights core expects."""
        return LLMResponse.model_construct(
            questions=self.questions,
            missing_info=self.missing_info,
            decision_hint=self.decision_hint,
            progress=self.progress,
        )
