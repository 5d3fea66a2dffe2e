"""ClarificationMachine: turns, the one-field lock and the budget (C2, C3, C8)."""

from __future__ import annotations

import pytest

from preflight_fsm import (
    ClarificationMachine,
    DecisionPatch,
    SessionFinished,
)

OTHER = "Other (specify)"
NO_KEYWORDS = "Improve the feedback form"


# -- turns and questions (C2, C3) ------------------------------------------------------------------


def test_first_turn_without_keywords_asks_the_category_with_its_companion() -> None:
    """C2: turn 1 asks change_category (options then Other) and its hidden companion."""
    turn = ClarificationMachine(NO_KEYWORDS).turn
    category, companion = turn.questions
    assert ("change_category", "single_choice") == (category.id, category.type)
    assert (
        "Frontend",
        "Backend",
        "Database",
        "Authentication",
        "Infra",
        OTHER,
    ) == category.options
    assert "What type of change is this?" == category.question
    assert (
        "change_category__other",
        "free_text",
        True,
        "change_category",
        OTHER,
        "Please specify (What type of change is this?):",
    ) == (
        companion.id,
        companion.type,
        companion.optional,
        companion.depends_on_question_id,
        companion.depends_on_value,
        companion.question,
    )
    assert 1 == turn.number


@pytest.mark.parametrize(
    ("intention", "qid", "options"),
    [
        ("Add OAuth login", "auth_strategy", ("OAuth", "Email/Password", "Magic Link", OTHER)),
        ("Migrate the database", "db_type", ("PostgreSQL", "MySQL", "MongoDB", OTHER)),
        ("New React component", "frontend_framework", ("React", "Vue", "Svelte", OTHER)),
        ("Add an endpoint", "backend_api_style", ("REST", "GraphQL", "gRPC", OTHER)),
        ("Deploy the app", "infra_hosting", ("Cloud", "Self-hosted", "Serverless", OTHER)),
    ],
    ids=["auth", "db", "frontend", "backend", "infra"],
)
def test_shortcut_asks_the_primary_field_first(
    intention: str, qid: str, options: tuple[str, ...]
) -> None:
    """C2/C4: a one-category intention's turn 1 asks that category's primary question."""
    turn = ClarificationMachine(intention).turn
    assert [qid, f"{qid}__other"] == [q.id for q in turn.questions]
    assert options == turn.questions[0].options


def test_need_other_asks_the_free_text_alone_and_required() -> None:
    """C2: NeedOther's turn asks `<qid>__other` alone, optional=False, not conditional."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": OTHER})
    (question,) = turn.questions
    assert (
        "auth_strategy__other",
        "free_text",
        False,
        None,
        None,
        "Please specify (Which authentication approach?):",
    ) == (
        question.id,
        question.type,
        question.optional,
        question.depends_on_question_id,
        question.depends_on_value,
        question.question,
    )


def test_a_volunteered_primary_field_is_passed_through_in_the_same_step() -> None:
    """C3: a state whose field is already answered is not asked; the step goes on to Done."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": "Database", "db_type": "MySQL"})
    assert ("Done", 1) == (turn.state, turn.number)
    assert DecisionPatch(category="Database", fields=(("Type", "MySQL"),)) == turn.patch


def test_a_step_never_asks_a_second_field() -> None:
    """C3 lock: one step from NeedCategory ends in NeedPrimaryField asking one field only."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": "Authentication", "db_type": "MySQL"})
    assert ["auth_strategy", "auth_strategy__other"] == [q.id for q in turn.questions]


def test_the_budget_of_three_turns_ends_in_no_patch() -> None:
    """C3: the 4th question turn is never asked; the session ends in NoPatch instead."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": OTHER})
    machine.step({"change_category__other": "frontend"})
    assert 3 == machine.turn.number
    turn = machine.step({"frontend_framework": OTHER})
    assert ("NoPatch", 3, ("frontend_framework",)) == (
        turn.state,
        turn.number,
        turn.missing_info,
    )


def test_step_on_a_finished_session_raises_session_finished() -> None:
    """C8: step on Done or NoPatch raises SessionFinished."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"})
    with pytest.raises(SessionFinished, match="start a new session"):
        machine.step({"auth_strategy": "OAuth"})
