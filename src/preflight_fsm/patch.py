"""C6: the DecisionPatch a finished session holds, and how it is built from the answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from preflight_fsm.flow import OTHER_SUFFIX
from preflight_fsm.states import Decided

if TYPE_CHECKING:
    from preflight_fsm.session import Session

__all__ = ["DecisionPatch", "patch_of"]


class DecisionPatch(BaseModel):
    """The decision a finished session extracted; field names equal Preflights' dataclass.

    ``fields`` holds the primary field first, then any volunteered secondary fields, in the order
    of the flow's category (C2). Never a placeholder, never an empty value (C6).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: str
    fields: tuple[tuple[str, str], ...]
    references: tuple[tuple[str, str], ...] = ()


def patch_of(s: Session) -> DecisionPatch | None:
    """The patch of a session in Done (C6); None in any other state."""
    if not isinstance(s.position, Decided):
        return None
    flow = s.engine.flow
    other = flow.other_category
    if s.position.category == other.name:
        # The Description is one line: it goes into an ADR heading's paragraph (C6).
        description = s.answers.get(other.description_id) or " ".join(s.intention.split())
        return _patch(other.name, ((other.field, description),))
    category = s.engine.categories[s.position.category]
    q = category.question
    value = s.answers[q.id]
    if value == flow.other_option:
        value = s.answers[q.id + OTHER_SUFFIX]
    fields = [(q.field, value)]
    fields += [(f.field, s.answers[f.id]) for f in category.secondary if f.id in s.answers]
    return _patch(category.name, tuple(fields))


def _patch(category: str, fields: tuple[tuple[str, str], ...]) -> DecisionPatch:
    # DecisionPatch's own validator, called directly (as turn.turn_of does for the Turn).
    patch: DecisionPatch = DecisionPatch.__pydantic_validator__.validate_python(
        {"category": category, "fields": fields}
    )
    return patch
