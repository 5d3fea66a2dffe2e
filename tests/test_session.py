"""session.py: one session's record; its state is its position's."""

from __future__ import annotations

import pytest

from preflight_fsm.engine import engine_for
from preflight_fsm.flow import OTHER_OPTION, default_flow
from preflight_fsm.states import AskingField


def test_the_state_is_read_off_the_position() -> None:
    """C1: moving the position moves the state; nothing else holds it."""
    session = engine_for(default_flow()).begin("Improve the feedback form")
    session.position = AskingField("Database")
    assert "NeedPrimaryField" == session.state


def test_a_state_the_position_does_not_name_is_refused() -> None:
    """A table row whose effect leads elsewhere than its destination fails loudly."""
    session = engine_for(default_flow()).begin("Improve the feedback form")
    with pytest.raises(RuntimeError, match="NeedCategory, not to Done"):
        session.state = "Done"


def test_a_step_leaves_the_session_it_stepped_from_as_it_was() -> None:
    """C5: a step works on a copy, so a refused step leaves the original as it was."""
    engine = engine_for(default_flow())
    session = engine.begin("Improve the feedback form")
    after = engine.step(session, {"change_category": "Database"}, "cli")
    assert ((), (), ("change_category", "change_category__other"), (), {}) == (
        session.trace,
        session.steps,
        session.asked,
        session.answered_by,
        session.answers,
    )
    assert (1, 1, 4, ("cli",)) == (
        len(after.trace),
        len(after.steps),
        len(after.asked),
        after.answered_by,
    )


def test_answers_keep_the_order_they_were_recorded_in_when_given_in_another() -> None:
    """C9: a custom category's text sent before its choice is recorded after it, as always."""
    engine = engine_for(default_flow())
    session = engine.begin("Improve the feedback form")
    given = {"change_category__other": "Observability", "change_category": OTHER_OPTION}
    after = engine.step(session, given)
    assert (["change_category", "change_category__other"], [given]) == (
        list(after.answers),
        [dict(step) for step in after.steps],
    )


def test_a_step_without_principal_or_proof_holds_no_provenance_of_its_own() -> None:
    """Unauthenticated, unsigned steps keep () (nothing per session); principals and proofs
    read one None per step off it, and the first step with a principal records every step's."""
    session = engine_for(default_flow()).begin("Improve the feedback form")
    unsigned = session.stepped({}, False, {}, "api", None, None)
    signed = unsigned.stepped({}, False, {}, "api", "alice", None)
    assert ((), (None,), (None,)) == (unsigned.provenance, unsigned.principals, unsigned.proofs)
    assert ((None, "alice"), (None, None)) == (signed.principals, signed.proofs)
