"""MockLLMAdapter: the spec §9 API, stateless and pure (C8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from preflight_fsm import ClarificationMachine, DecisionPatch, MockLLMAdapter, SessionSnapshot

ADAPTER = MockLLMAdapter()
OTHER = "Other (specify)"


@dataclass(frozen=True)
class PreflightsLikeSnapshot:
    """The four fields of Preflights' SessionSnapshot dataclass."""

    intention: str
    asked_questions: tuple[str, ...]
    answered_questions: tuple[str, ...]
    missing_info: tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    categories: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Config:
    schema: Schema


def test_generate_questions_without_state_is_turn_one() -> None:
    """C8: without session_state, generate_questions answers turn 1."""
    response = ADAPTER.generate_questions("Improve the feedback form", None)
    assert ["change_category", "change_category__other"] == [q.id for q in response.questions]
    assert (("change_category",), "unsure", 0.0) == (
        response.missing_info,
        response.decision_hint,
        response.progress,
    )


def test_generate_questions_with_a_snapshot_answers_that_turn() -> None:
    """C8: with a session_state, the response is the turn that snapshot stands at."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Infra"})
    response = ADAPTER.generate_questions("ignored", None, session_state=machine.snapshot())
    assert machine.turn.to_llm_response() == response


def test_generate_questions_accepts_preflights_dataclass_snapshots() -> None:
    """C8/C9: Preflights' own four-field SessionSnapshot restores to a position."""
    state = PreflightsLikeSnapshot(
        "Add OAuth login", ("auth_strategy", "auth_strategy__other"), (), ("auth_strategy",)
    )
    response = ADAPTER.generate_questions("Add OAuth login", None, session_state=state)
    assert ("auth_strategy",) == response.missing_info


def test_generate_questions_with_nothing_missing_asks_nothing() -> None:
    """C9: an empty missing_info in a minimal snapshot gives no questions and progress 1.0."""
    state = PreflightsLikeSnapshot("Add OAuth login", ("auth_strategy",), ("auth_strategy",), ())
    response = ADAPTER.generate_questions("Add OAuth login", None, session_state=state)
    assert ((), (), 1.0) == (response.questions, response.missing_info, response.progress)


def test_a_refused_session_state_is_answered_with_turn_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """D41: an LLM port never raises; a session_state it refuses is logged, turn 1 answered."""
    response = ADAPTER.generate_questions("Add OAuth login", None, session_state="{not json")
    assert ["auth_strategy", "auth_strategy__other"] == [q.id for q in response.questions]
    assert "session_state refused" in caplog.text


@pytest.mark.parametrize("intention", ["TBD", "", "x" * 2001, "Add \ud800 login", 42], ids=repr)
def test_an_intention_it_cannot_take_is_asked_its_category(intention: Any) -> None:
    """D41: placeholders, empty, too long, undecodable or not text: the category question."""
    response = ADAPTER.generate_questions(intention)
    assert ("change_category",) == response.missing_info
    assert (0.0, "unsure") == (response.progress, response.decision_hint)


def test_generate_questions_accepts_and_ignores_preflights_keywords() -> None:
    """C8: debug_llm= and repo_path= are accepted and ignored."""
    plain = ADAPTER.generate_questions("Add OAuth login", None)
    assert plain == ADAPTER.generate_questions(
        "Add OAuth login", None, None, None, debug_llm=True, repo_path="/tmp"
    )


@pytest.mark.parametrize(
    ("intention", "answers", "patch"),
    [
        (
            "Add OAuth login",
            {"auth_strategy": "OAuth"},
            DecisionPatch(category="Authentication", fields=(("Strategy", "OAuth"),)),
        ),
        (
            "Improve the feedback form",
            {"change_category": "Database", "db_type": "MySQL", "core_scope": "all"},
            DecisionPatch(category="Database", fields=(("Type", "MySQL"),)),
        ),
        (
            "Improve the feedback form",
            {"change_category": OTHER, "change_category__other": "Billing"},
            DecisionPatch(category="Other", fields=(("Description", "Improve the feedback form"),)),
        ),
        (
            "Add OAuth login",
            {"auth_strategy": OTHER, "auth_strategy__other": "SAML"},
            DecisionPatch(category="Authentication", fields=(("Strategy", "SAML"),)),
        ),
    ],
    ids=["shortcut", "two-phase-with-unknown-ids", "custom-category", "other-field"],
)
def test_extract_replays_the_answers(
    intention: str, answers: dict[str, Any], patch: DecisionPatch
) -> None:
    """C8: extract replays answers on a fresh machine, ignoring ids it does not know."""
    assert patch == ADAPTER.extract_decision_patch(intention, answers, None)


@pytest.mark.parametrize(
    ("intention", "answers"),
    [
        ("Improve the feedback form", {}),
        ("Improve the feedback form", {"change_category": "Database"}),
        ("Add OAuth login", {"auth_strategy": "TBD"}),
        ("Add OAuth login", {"auth_strategy": OTHER}),
        ("Add OAuth login", {"auth_strategy": ["OAuth", "SAML"]}),
        ("Add OAuth login", {"auth_strategy": 3}),
        ("", {"auth_strategy": "OAuth"}),
    ],
    ids=["nothing", "field-missing", "placeholder", "text-owed", "two-values", "not-text", "bad"],
)
def test_extract_returns_none_instead_of_raising(intention: str, answers: dict[str, Any]) -> None:
    """C8: no patch -> None; invalid values and intentions give None, never an exception."""
    assert ADAPTER.extract_decision_patch(intention, answers, None) is None


def test_a_heuristics_schema_bounds_the_patch() -> None:
    """C8: a patch whose category or fields the schema lacks becomes None."""
    answers = {"auth_strategy": "OAuth", "auth_library": "Auth.js"}
    allows = Config(Schema((("Authentication", ("Strategy", "Library")),)))
    lacks_field = Config(Schema((("Authentication", ("Strategy",)),)))
    lacks_category = Config(Schema((("Database", ("Type",)),)))
    assert ADAPTER.extract_decision_patch("Add OAuth login", answers, allows) is not None
    assert ADAPTER.extract_decision_patch("Add OAuth login", answers, lacks_field) is None
    assert ADAPTER.extract_decision_patch("Add OAuth login", answers, lacks_category) is None


def test_the_adapter_keeps_no_state_between_calls() -> None:
    """C8: stateless: the same call gives the same answer whatever came before."""
    first = ADAPTER.generate_questions("Add OAuth login", None)
    ADAPTER.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, None)
    assert first == ADAPTER.generate_questions("Add OAuth login", None)
    assert not hasattr(ADAPTER, "__dict__")


def test_a_schema_is_read_as_preflights_reads_it() -> None:
    """C8: category and field names compare case-insensitively; "*" accepts any field."""
    other = {"change_category": OTHER, "change_category__other": "Payments"}
    wildcard = Config(Schema((("Other", ("*",)),)))
    lowercase = Config(Schema((("authentication", ("strategy",)),)))
    assert ADAPTER.extract_decision_patch("Fix checkout", other, wildcard) is not None
    assert (
        ADAPTER.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, lowercase)
        is not None
    )


# -- hostile input: an LLM port never raises (D41) -----------------------------------------------


@dataclass(frozen=True)
class Foreign:
    """A dataclass without Preflights' four fields."""

    x: int = 1


@dataclass(frozen=True)
class Nones:
    """Preflights' four fields, each None."""

    intention: None = None
    asked_questions: None = None
    answered_questions: None = None
    missing_info: None = None


@pytest.mark.parametrize(
    "state", [Foreign(), Nones(), {}, {"foo": 1}, {"answers": [[]]}, "\udcff"], ids=repr
)
def test_a_session_state_of_any_shape_is_answered_with_turn_one(state: object) -> None:
    """Issue 23 items 2-4: garbage is neither a crash nor a finished session."""
    response = ADAPTER.generate_questions("Improve the feedback form", None, session_state=state)
    assert (("change_category",), 0.0) == (response.missing_info, response.progress)


def test_a_finished_four_field_snapshot_of_this_project_asks_nothing() -> None:
    """C9: the project's own SessionSnapshot with an empty missing_info is complete."""
    state = SessionSnapshot(
        intention="Add OAuth login",
        asked_questions=("auth_strategy",),
        answered_questions=("auth_strategy",),
        missing_info=(),
    )
    response = ADAPTER.generate_questions("Add OAuth login", None, session_state=state)
    assert ((), (), 1.0) == (response.questions, response.missing_info, response.progress)


# ids by type: an object's repr holds its address, which differs between xdist workers.
@pytest.mark.parametrize("config", [1, "schema", object()], ids=lambda c: type(c).__name__)
def test_a_heuristics_config_it_cannot_read_gives_no_patch(config: object) -> None:
    """Issue 23 item 3: a non-config third argument is None, not an exception."""
    assert (
        ADAPTER.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, config)
        is None
    )
