"""guards.py: every guard is named, pure and returns a real bool; effects move the position."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_fsm.engine import engine_for
from preflight_fsm.flow import default_flow
from preflight_fsm.guards import EFFECTS, GUARDS
from preflight_fsm.session import Session
from preflight_fsm.table import transition_table

OTHER = "Other (specify)"
ENGINE = engine_for(default_flow())

# Sessions at every position a step can leave them in.
JOURNEYS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "need-category": ("Improve the feedback form", []),
    "need-field": ("Add OAuth login", []),
    "need-other-category": ("Improve the feedback form", [{"change_category": OTHER}]),
    "need-other-field": ("Add OAuth login", [{"auth_strategy": OTHER}]),
    "done": ("Add OAuth login", [{"auth_strategy": "OAuth"}]),
    "no-patch": ("Add OAuth login", [{"auth_strategy": ""}]),
}


def at(name: str) -> Session:
    intention, steps = JOURNEYS[name]
    session = ENGINE.begin(intention)
    for answers in steps:
        session = ENGINE.step(session, answers)
    return session


def fingerprint(s: Session) -> tuple[Any, ...]:
    return (s.position, dict(s.answers), s.turn, list(s.asked), list(s.trace), list(s.steps))


@pytest.mark.parametrize("journey", list(JOURNEYS))
@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_every_guard_returns_a_bool_and_changes_nothing(guard: str, journey: str) -> None:
    """transitions compares guards with `== True` and may run them to check a trigger."""
    session = at(journey)
    before = fingerprint(session)
    assert type(GUARDS[guard](session)) is bool
    assert before == fingerprint(session)


def test_every_guard_and_effect_is_used_by_the_table() -> None:
    """No dead guard or effect: each is named by some row."""
    edges = transition_table()
    assert set(GUARDS) == {g for e in edges for g in e.guards}
    assert set(EFFECTS) == {e.effect for e in edges}
