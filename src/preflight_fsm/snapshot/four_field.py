"""Preflights' four-field form (C9): a minimal snapshot restores to the position it names."""

from __future__ import annotations

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.engine import Engine
from preflight_fsm.errors import InvalidSnapshot
from preflight_fsm.flow import OTHER_OPTION, OTHER_SUFFIX
from preflight_fsm.session import Session
from preflight_fsm.snapshot.model import SessionSnapshot
from preflight_fsm.snapshot.replay import replay
from preflight_fsm.states import NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD

__all__ = ["restore_four_field"]


def restore_four_field(engine: Engine, snap: SessionSnapshot) -> Session:
    """The session at the position a minimal snapshot names, by inputs synthesised to reach it
    (D39): the category answer when the field is asked and the intention does not name it, and
    "Other (specify)" for the question whose text is owed."""
    for name in ("flow", "owner", "category", "other_for", "turn", "digest", "seal"):
        if getattr(snap, name) is not None:
            raise InvalidSnapshot(name, "is set but 'state' is not; a full snapshot needs both")
    for name in ("steps", "answered_by", "principals", "proofs", "answers", "trace"):
        if getattr(snap, name):
            raise InvalidSnapshot(name, "is set but 'state' is not; a full snapshot needs both")
    if not snap.missing_info:
        raise InvalidSnapshot(
            "missing_info", "is empty: the session is complete and has no position to restore"
        )
    if len(snap.missing_info) > 1:
        raise InvalidSnapshot("missing_info", "holds more than one key; a session waits for one")
    known = engine.rules.known
    for field in ("asked_questions", "answered_questions"):
        strange = [q for q in getattr(snap, field) if q not in known]
        if strange:
            raise InvalidSnapshot(field, "holds ids this flow does not know: " + ", ".join(strange))
    key = snap.missing_info[0]
    text_owed = key in snap.answered_questions
    other = OTHER_OPTION
    named = engine.keywords.only_category(snap.intention)
    steps: list[dict[str, str | None]] = []
    if key == engine.category_qid:
        target = NEED_OTHER if text_owed else NEED_CATEGORY
        if named is not None:
            raise InvalidSnapshot(
                "missing_info",
                f"names {key}, but the intention already names the category {named!r}",
            )
        if text_owed:
            steps.append({key: other})
    elif key in engine.category_of_primary:
        target = NEED_OTHER if text_owed else NEED_PRIMARY_FIELD
        category = engine.category_of_primary[key]
        if named is None:
            steps.append({engine.category_qid: category})
        elif named != category:
            raise InvalidSnapshot(
                "missing_info", f"names {key}, but the intention names the category {named!r}"
            )
        if text_owed:
            steps.append({key: other})
    else:
        kind = "an __other id" if key.endswith(OTHER_SUFFIX) else "no question of this flow"
        raise InvalidSnapshot("missing_info", f"names {key!r}, {kind}; it names a choice")
    # Preflights' four fields do not say who answered: the synthesised steps are "unknown".
    unknown: list[AnsweredBy] = ["unknown"] * len(steps)
    s = replay(engine, snap.intention, steps, unknown)
    if s.position.state != target:  # a budget below the synthesised turns
        raise InvalidSnapshot("missing_info", f"names a position this flow cannot reach ({target})")
    return s
