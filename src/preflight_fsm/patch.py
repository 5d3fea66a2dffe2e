"""C6: the DecisionPatch a finished session holds, and how it is built from the answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from preflight_fsm.flow import OTHER_SUFFIX
from preflight_fsm.states import Decided

if TYPE_CHECKING:
    from preflight_fsm.session import Session

__all__ = ["DecisionPatch", "patch_fields"]


class DecisionPatch(BaseModel):
    """The decision a finished session extracted; field names equal Preflights' dataclass.

    ``fields`` holds the primary field first, then any volunteered secondary fields, in the order
    of the flow's category (C2). Never a placeholder, never an empty value (C6).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: str
    fields: tuple[tuple[str, str], ...]
    references: tuple[tuple[str, str], ...] = ()


def patch_fields(s: Session) -> dict[str, Any] | None:
    """C6: the fields of the patch of a session in Done, as DecisionPatch is validated from;
    None in any other state."""
    position = s.position
    if not isinstance(position, Decided):
        return None
    engine = s.engine
    answers = s.answers
    if position.category == engine.other_category_name:
        other = engine.flow.other_category
        # The Description is one line: it goes into an ADR heading's paragraph (C6).
        description = answers.get(other.description_id) or " ".join(s.intention.split())
        return {"category": position.category, "fields": ((other.field, description),)}
    category = engine.categories[position.category]
    q = category.question
    value = answers[q.id]
    if value == engine.rules.other:
        value = answers[q.id + OTHER_SUFFIX]
    fields: tuple[tuple[str, str], ...] = ((q.field, value),)
    for secondary in category.secondary:  # a loop: no list built and copied for the common none
        if secondary.id in answers:
            fields += ((secondary.field, answers[secondary.id]),)
    return {"category": position.category, "fields": fields}
