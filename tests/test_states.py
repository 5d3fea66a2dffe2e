"""states.py: the state names, and a position type per state that holds only what it needs."""

from __future__ import annotations

import dataclasses

import pytest

from preflight_fsm.states import (
    ASKING_CATEGORY,
    QUESTION_STATES,
    STATES,
    TERMINAL_STATES,
    AskingCategory,
    AskingField,
    AwaitingText,
    Decided,
    Stopped,
)


@pytest.mark.parametrize(
    ("position", "state"),
    [
        (ASKING_CATEGORY, "NeedCategory"),
        (AskingField("Database"), "NeedPrimaryField"),
        (AwaitingText(None), "NeedOther"),
        (Decided("Other"), "Done"),
        (Stopped(None), "NoPatch"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_every_position_names_its_state(position: object, state: str) -> None:
    """C1: the state is read off the position, one position type per state."""
    assert state == position.state  # type: ignore[attr-defined]


def test_need_category_holds_no_category() -> None:
    """A session asking its category cannot also hold one: the type has no such field."""
    assert [] == [f.name for f in dataclasses.fields(AskingCategory)]
    assert ASKING_CATEGORY.category is None


@pytest.mark.parametrize("cls", [AskingField, Decided], ids=lambda c: c.__name__)
def test_field_and_done_positions_need_a_category(cls: type) -> None:
    """NeedPrimaryField and Done cannot be built without the category they stand for."""
    with pytest.raises(TypeError):
        cls()


def test_positions_are_frozen() -> None:
    """A position is a value: moving means taking another one."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        AskingField("Database").category = "Frontend"  # type: ignore[misc]


def test_question_and_terminal_states_split_the_states() -> None:
    """C1: three states ask questions, two end the session."""
    assert set(STATES) == QUESTION_STATES | TERMINAL_STATES
    assert not QUESTION_STATES & TERMINAL_STATES
