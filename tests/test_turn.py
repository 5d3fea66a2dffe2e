"""turn.py: missing_info, progress and decision_hint of every position (C7)."""

from __future__ import annotations

from typing import Any

import pytest

from journeys import JOURNEYS
from preflight_fsm import (
    ClarificationMachine,
    Turn,
)
from preflight_fsm.session import Session
from preflight_fsm.turn import turn_from_data, turn_of
from preflight_fsm.turn_data import missing_info_of, turn_data, turn_fields, turn_values

OTHER = "Other (specify)"
NO_KEYWORDS = "Improve the feedback form"


# -- progress, hint, missing_info (C7) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("intention", "steps", "state", "missing", "progress", "hint"),
    [
        (NO_KEYWORDS, [], "NeedCategory", ("change_category",), 0.0, "unsure"),
        ("Add OAuth login", [], "NeedPrimaryField", ("auth_strategy",), 0.5, "adr"),
        ("New React component", [], "NeedPrimaryField", ("frontend_framework",), 0.5, "task"),
        (
            NO_KEYWORDS,
            [{"change_category": OTHER}],
            "NeedOther",
            ("change_category",),
            0.0,
            "unsure",
        ),
        (
            "Add OAuth login",
            [{"auth_strategy": OTHER}],
            "NeedOther",
            ("auth_strategy",),
            0.5,
            "adr",
        ),
        ("Add OAuth login", [{"auth_strategy": "OAuth"}], "Done", (), 1.0, "adr"),
        (NO_KEYWORDS, [{"change_category": "Billing"}], "Done", (), 1.0, "unsure"),
        (NO_KEYWORDS, [{"change_category": ""}], "NoPatch", ("change_category",), 0.0, "unsure"),
        ("Add OAuth login", [{"auth_strategy": ""}], "NoPatch", ("auth_strategy",), 0.5, "adr"),
    ],
    ids=[
        "category",
        "shortcut",
        "shortcut-task",
        "other-category",
        "other-field",
        "done",
        "done-other",
        "nopatch-category",
        "nopatch-field",
    ],
)
def test_progress_hint_and_missing_info_follow_the_state(
    intention: str,
    steps: list[dict[str, Any]],
    state: str,
    missing: tuple[str, ...],
    progress: float,
    hint: str,
) -> None:
    """C7: missing_info, progress and decision_hint for every kind of position."""
    machine = ClarificationMachine(intention)
    for answers in steps:
        machine.step(answers)
    turn = machine.turn
    assert (state, missing, progress, hint) == (
        turn.state,
        turn.missing_info,
        turn.progress,
        turn.decision_hint,
    )


def test_turn_converts_to_an_llm_response() -> None:
    """C8: a Turn carries the LLMResponse fields Preflights expects."""
    turn = ClarificationMachine("Add OAuth login").turn
    response = turn.to_llm_response()
    assert (turn.questions, turn.missing_info, turn.decision_hint, turn.progress) == (
        response.questions,
        response.missing_info,
        response.decision_hint,
        response.progress,
    )


# -- the turns an engine shares (D46, D150) ------------------------------------------------------


def _sessions() -> list[tuple[str, Session]]:
    found = []
    for name, (intention, steps) in JOURNEYS.items():
        machine = ClarificationMachine(intention)
        found.append((f"{name}@0", machine._session))
        for k, answers in enumerate(steps, start=1):
            machine.step(dict(answers))
            found.append((f"{name}@{k}", machine._session))
    return found


SESSIONS = _sessions()


@pytest.mark.parametrize("session", [s for _, s in SESSIONS], ids=[n for n, _ in SESSIONS])
def test_the_turn_cache_key_covers_every_turn_field(session: Session) -> None:
    """D46: turn_of keys shared turns by turn_fields, which gives a value for every field of
    Turn; a field added to Turn but not to turn_fields fails here, not as a stale shared turn."""
    assert len(Turn.model_fields) == len(turn_fields(session))


@pytest.mark.parametrize("session", [s for _, s in SESSIONS], ids=[n for n, _ in SESSIONS])
def test_turn_fields_come_in_the_order_of_turns_fields(session: Session) -> None:
    """D154: each value sits at its field's place: read by name, each is what the session holds
    (two fields swapped in turn_fields fail here, though the Turn built from them may validate)."""
    position = session.position
    progress = 1.0 if position.state == "Done" else 0.0 if position.category is None else 0.5
    expected = {
        "state": position.state,
        "questions": session.engine.questions(position),
        "missing_info": missing_info_of(session),
        "progress": progress,
        "number": session.turn,
    }
    values = turn_values(session)
    assert expected == {name: values[name] for name in expected}


@pytest.mark.parametrize("session", [s for _, s in SESSIONS], ids=[n for n, _ in SESSIONS])
def test_a_shared_turn_equals_the_turn_built_afresh(session: Session) -> None:
    """D46: whatever turn_of returns is the Turn the session's position builds."""
    assert turn_from_data(turn_data(session)) == turn_of(session)


def test_sessions_at_the_same_position_share_one_turn() -> None:
    """D46: a live session holds its turn; alike turns are one object (memory, D150)."""
    first, second = (ClarificationMachine(NO_KEYWORDS) for _ in range(2))
    assert first.turn is second.turn
