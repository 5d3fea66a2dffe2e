"""C6: a finished session's patch as plain data, and how it is built from the answers.

The engine, the snapshot and the command line use these; ``patch.py``'s :class:`DecisionPatch`
(the public model) is validated from :func:`patch_fields` only when a Turn is built, so a
command never imports pydantic for a patch (issue 32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from preflight_fsm.flow_data import OTHER_SUFFIX
from preflight_fsm.states import Decided

if TYPE_CHECKING:
    from preflight_fsm.session import Session

__all__ = ["PatchData", "patch_fields"]


class PatchData(NamedTuple):
    """A DecisionPatch's fields, in its order (``tests/test_turn_data.py`` holds them equal)."""

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
        other = engine.flow_data.other_category
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
