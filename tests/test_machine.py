"""Behaviour of ClarificationMachine.step: turns, the lock, answers, routing, C7 fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preflight_fsm import (
    ClarificationMachine,
    DecisionPatch,
    InvalidAnswers,
    InvalidIntention,
    SessionFinished,
)

OTHER = "Other (specify)"
NO_KEYWORDS = "Improve the feedback form"


def ids(machine: ClarificationMachine) -> list[str]:
    return [q.id for q in machine.turn.questions]


def refused(machine: ClarificationMachine, answers: Any) -> dict[str, Any]:
    before = machine.snapshot()
    with pytest.raises(InvalidAnswers) as info:
        machine.step(answers)
    assert before == machine.snapshot(), "a refused step must leave the session unchanged (C5)"
    json.dumps(info.value.feedback)  # JSON-serialisable
    return info.value.feedback


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


# -- answers (C5) ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("  oauth ", "OAuth"),
        ("MAGIC   link", "Magic Link"),
        (["Email/Password"], "Email/Password"),
        (("OAuth",), "OAuth"),
    ],
    ids=["stripped-case", "collapsed-space", "one-element-list", "one-element-tuple"],
)
def test_choice_answers_match_options_case_insensitively(given: Any, recorded: str) -> None:
    """C5: values are stripped and collapsed; options match case-insensitively, canonically."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": given})
    assert turn.patch is not None
    assert (("Strategy", recorded),) == turn.patch.fields


def test_other_matches_the_canonical_other_option() -> None:
    """C5: "other" matches "Other (specify)"."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "other"})
    assert OTHER == machine.answers["auth_strategy"]


@pytest.mark.parametrize(
    "blank", [None, "", "   ", [], "TBD", "todo", "N/A", "na", "null", "?", "-", "...", "…"]
)
def test_blank_or_placeholder_for_the_pending_key_is_a_decline(blank: Any) -> None:
    """C5: a blank or placeholder for the pending key ends the session in NoPatch."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": blank})
    assert ("NoPatch", None, ("auth_strategy",)) == (turn.state, turn.patch, turn.missing_info)


def test_none_is_a_real_answer() -> None:
    """C5: "none" is not a placeholder ("ORM: none")."""
    machine = ClarificationMachine("Migrate the database")
    turn = machine.step({"db_type": "PostgreSQL", "db_orm": "none"})
    assert turn.patch is not None
    assert (("Type", "PostgreSQL"), ("ORM", "none")) == turn.patch.fields


def test_other_with_a_blank_companion_is_not_a_decline() -> None:
    """C5: "Other (specify)" with a blank companion owes the text: NeedOther, not NoPatch."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": OTHER, "auth_strategy__other": "   "})
    assert ("NeedOther", ("auth_strategy",)) == (turn.state, turn.missing_info)


def test_an_absent_pending_key_is_a_missing_issue() -> None:
    """C5: leaving the pending key out is an error naming the key, not a decline."""
    feedback = refused(ClarificationMachine("Add OAuth login"), {"auth_library": "Auth.js"})
    assert ["auth_strategy"] == [m["field"] for m in feedback["issues"]["missing"]]
    assert "auth_strategy" in feedback["action"]


def test_in_need_other_the_missing_key_is_the_free_text() -> None:
    """C5: in NeedOther the pending key to send is `<qid>__other`."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": OTHER})
    feedback = refused(machine, {"auth_strategy": OTHER})
    assert ["auth_strategy__other"] == [m["field"] for m in feedback["issues"]["missing"]]


def test_unknown_ids_are_listed_and_nothing_is_recorded() -> None:
    """C5: ids the flow does not know go to `unknown`; the step is refused whole."""
    feedback = refused(
        ClarificationMachine("Add OAuth login"),
        {"auth_strategy": "OAuth", "colour": "blue"},
    )
    assert ["colour"] == feedback["issues"]["unknown"]
    assert 1 == feedback["issue_count"]


def test_feedback_has_the_documented_shape_and_never_says_try_again() -> None:
    """C5: the feedback is {result, issues{invalid, missing, unknown}, issue_count, action}."""
    feedback = refused(
        ClarificationMachine("Add OAuth login"), {"auth_strategy": ["OAuth", "SAML"], "x": "1"}
    )
    assert {"result", "issues", "issue_count", "action"} == set(feedback)
    assert "validation_failed" == feedback["result"]
    (invalid,) = feedback["issues"]["invalid"]
    assert {"field", "provided", "problem", "requirement"} == set(invalid)
    assert "several values" in invalid["problem"]
    assert "try again" not in feedback["action"].lower()


def test_identical_resend_is_accepted_and_ignored() -> None:
    """C5: callers may resend cumulative dicts; an identical answer changes nothing."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": "Authentication"})
    turn = machine.step({"change_category": "authentication", "auth_strategy": "OAuth"})
    assert "Done" == turn.state


def test_a_custom_value_resent_equals_other_with_that_text() -> None:
    """C5: a custom value is recorded as Other + text, so resending either form is identical."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": OTHER})
    machine.step({"change_category": "Other", "change_category__other": "our postgres db"})
    turn = machine.step({"change_category": "our postgres db", "db_type": "MySQL"})
    assert "Done" == turn.state


def test_a_different_value_for_a_resolved_question_is_a_conflict() -> None:
    """C5: changing a recorded answer is an `invalid` conflict; the session is unchanged."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": "Authentication"})
    feedback = refused(machine, {"change_category": "Database", "auth_strategy": "OAuth"})
    (issue,) = feedback["issues"]["invalid"]
    assert "change_category" == issue["field"]
    assert "conflicts" in issue["problem"]


def test_a_companion_counts_only_when_its_question_is_other() -> None:
    """C5: `<qid>__other` is ignored unless `<qid>` is "Other (specify)"."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "OAuth", "auth_strategy__other": "SAML"})
    assert turn.patch is not None
    assert (("Strategy", "OAuth"),) == turn.patch.fields
    assert "auth_strategy__other" not in machine.answers


def test_blank_volunteered_answers_are_no_answer() -> None:
    """C5: a blank anywhere but the pending key is simply no answer."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "OAuth", "auth_library": "tbd"})
    assert turn.patch is not None
    assert (("Strategy", "OAuth"),) == turn.patch.fields


@pytest.mark.parametrize(
    ("answers", "field", "problem"),
    [
        ({"auth_strategy": "x" * 501}, "auth_strategy", "limit is 500"),
        ({"auth_strategy": "OAuth\x00"}, "auth_strategy", "control characters"),
        ({"auth_strategy": 3}, "auth_strategy", "must be text"),
        ({"auth_strategy": ["OAuth", 1]}, "auth_strategy", "only strings"),
        ({f"k{i}": "v" for i in range(33)}, "answers", "too many"),
    ],
    ids=["too-long", "control-char", "not-text", "list-of-non-text", "too-many"],
)
def test_limits_are_refused_as_invalid(answers: dict[str, Any], field: str, problem: str) -> None:
    """C5 limits: 500 characters, no control characters, text only, at most 32 answers."""
    feedback = refused(ClarificationMachine("Add OAuth login"), answers)
    invalid = feedback["issues"]["invalid"]
    assert [field] == [i["field"] for i in invalid]
    assert problem in invalid[0]["problem"]


def test_answers_must_be_a_mapping() -> None:
    """C5: anything but an object of answers is one `invalid` issue on `answers`."""
    feedback = refused(ClarificationMachine("Add OAuth login"), ["OAuth"])
    assert "answers" == feedback["issues"]["invalid"][0]["field"]


def test_crlf_and_tabs_are_accepted_and_collapsed() -> None:
    """C5: \\r\\n and \\r become \\n; tab and newline are allowed; runs of space collapse."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "Single\r\nsign-on\r\tvia  SAML"})
    assert turn.patch is not None
    assert (("Strategy", "Single sign-on via SAML"),) == turn.patch.fields


@pytest.mark.parametrize(
    "intention",
    ["", "   ", "TBD", "x" * 2001, "bad\x07bell", 42],
    ids=["empty", "blank", "placeholder", "too-long", "control", "not-text"],
)
def test_invalid_intentions_are_refused(intention: Any) -> None:
    """C5: the intention is 1-2000 characters after stripping, no placeholder, no controls."""
    with pytest.raises(InvalidIntention, match="send"):
        ClarificationMachine(intention)


# -- routing and patches (C6) ----------------------------------------------------------------------


def test_a_patch_lists_primary_then_volunteered_secondaries() -> None:
    """C6: the primary field first, then concrete volunteered secondary fields of the category."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step(
        {"auth_library": "Auth.js", "db_orm": "Prisma", "auth_strategy": "Magic Link"}
    )
    assert (
        DecisionPatch(
            category="Authentication", fields=(("Strategy", "Magic Link"), ("Library", "Auth.js"))
        )
        == turn.patch
    )


def test_backend_fills_api_style_and_takes_framework_as_secondary() -> None:
    """C2: the Backend question fills API_Style; Framework is the volunteered secondary."""
    machine = ClarificationMachine("Add an endpoint")
    turn = machine.step({"backend_api_style": "GraphQL", "backend_framework": "FastAPI"})
    assert turn.patch is not None
    assert (("API_Style", "GraphQL"), ("Framework", "FastAPI")) == turn.patch.fields


def test_custom_category_uses_the_description_answer_when_given() -> None:
    """C6: the Other patch's Description is the `description` answer if concrete."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": "Billing", "description": "Retry failed invoices"})
    assert (
        DecisionPatch(category="Other", fields=(("Description", "Retry failed invoices"),))
        == turn.patch
    )


def test_category_text_equal_to_a_category_name_resolves_to_it() -> None:
    """C6: the text resolves when it equals a category name case-insensitively."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": OTHER, "change_category__other": "infra"})
    assert ("NeedPrimaryField", ("infra_hosting",)) == (turn.state, turn.missing_info)


def test_ambiguous_category_text_files_under_other() -> None:
    """C4/C6: text matching two categories names none: Done with the Other patch."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": OTHER, "change_category__other": "login api"})
    assert turn.patch is not None
    assert "Other" == turn.patch.category


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


@pytest.mark.parametrize(
    "answers",
    [
        {"frontend_framework__other": OTHER},
        {"frontend_framework__other": "other"},
        {"frontend_framework__other": "Vue", "styling": "Other (Specify)"},
    ],
    ids=["companion-option", "companion-other", "volunteered-option"],
)
def test_the_other_option_is_never_taken_as_free_text(answers: dict[str, str]) -> None:
    """Spec §5.2 Rule 2 / C5: "Other (specify)" typed as text is refused, never a patch value."""
    machine = ClarificationMachine("Build a frontend settings page")
    machine.step({"frontend_framework": OTHER})
    feedback = refused(machine, answers)
    assert "itself" in feedback["issues"]["invalid"][0]["problem"]
