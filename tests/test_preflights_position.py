"""Where a Preflights session stands on the engine: the intention it runs on, settled answers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import default_flow
from preflight_fsm.integrations.preflights.position import (
    STAND_IN_INTENTION,
    engine_intention,
    position,
)

FLOW = default_flow()
OTHER = "Other (specify)"


@pytest.mark.parametrize(
    ("intention", "text", "noted"),
    [
        ("Add login", "Add login", False),
        ("TBD", STAND_IN_INTENTION, True),
        ("   ", STAND_IN_INTENTION, True),
        ("Add login\x00 now", "Add login now", True),
        ("Add login " + "word " * 500, ("Add login " + "word " * 500)[:1999].rstrip(), True),
    ],
    ids=["taken", "placeholder", "blank", "control-character", "too-long"],
)
def test_engine_intention_is_the_closest_text_the_engine_takes(
    intention: str, text: str, noted: bool
) -> None:
    """The intention itself when taken; else clipped, cleaned, or the stand-in, with a note."""
    chosen = engine_intention(intention, FLOW)
    assert (text, noted) == (chosen.text, chosen.note is not None)


def test_a_long_intention_is_clipped_at_a_space_within_the_limit() -> None:
    """The engine reads at most max_intention_chars, cut between words."""
    chosen = engine_intention("Add login " + "word " * 500, FLOW)
    assert len(chosen.text) <= FLOW.limits.max_intention_chars
    assert chosen.text.endswith("word")


@pytest.mark.parametrize(
    ("intention", "answers", "state", "missing"),
    [
        ("Improve the checkout flow", {}, "NeedCategory", ("change_category",)),
        (
            "Improve the checkout flow",
            {"change_category": "Database"},
            "NeedPrimaryField",
            ("db_type",),
        ),
        (
            "Improve the checkout flow",
            {"change_category": "Database", "db_type": "MySQL"},
            "Done",
            (),
        ),
        ("Add login", {"auth_strategy": OTHER}, "NeedOther", ("auth_strategy",)),
        (
            "Add login",
            {"auth_strategy": OTHER, "auth_strategy__other": "tbd"},
            "NoPatch",
            ("auth_strategy",),
        ),
        ("Add login", {"auth_strategy": "tbd"}, "NoPatch", ("auth_strategy",)),
        ("Improve it", {"change_category": "Database", "db_type": "n/a"}, "NoPatch", ("db_type",)),
        ("Add login", {"auth_strategy": "OAuth", "allowlist_paths": "src/"}, "Done", ()),
    ],
    ids=[
        "turn-1",
        "field-next",
        "done",
        "other-text-owed",
        "other-text-declined",
        "field-declined",
        "field-declined-after-category",
        "unknown-ids-ignored",
    ],
)
def test_flat_answers_settle_where_the_session_stands(
    intention: str, answers: dict[str, Any], state: str, missing: tuple[str, ...]
) -> None:
    """Replayed and settled, flat answers end at the question still owed, Done, or NoPatch."""
    where = position(intention, answers, FLOW)
    assert where.turn is not None
    assert (state, missing) == (where.turn.state, where.turn.missing_info)


def test_a_round_settled_with_one_step_takes_one_step_whatever_else_it_answers() -> None:
    """A signed round takes one step (a passkey signs one step's challenge): the category; the
    field it leads to, declined in the same answers, is asked next instead of settled (NoPatch)
    in a second step."""
    answers = {"change_category": "Frontend", "frontend_framework": ""}
    settled = [position("Improve it", answers, FLOW, one_step=one) for one in (False, True)]
    assert [(2, "NoPatch"), (1, "NeedPrimaryField")] == [
        (len(w.record.steps), w.turn.state) for w in settled if w.record and w.turn
    ]


def test_refused_answers_give_the_engines_feedback() -> None:
    """An Other text over 500 characters gives the structured feedback (C5), no turn."""
    answers = {"auth_strategy": OTHER, "auth_strategy__other": "x" * 600}
    where = position("Add login", answers, FLOW)
    assert where.turn is None
    assert where.feedback is not None
    assert ["auth_strategy__other"] == [i["field"] for i in where.feedback["issues"]["invalid"]]


@given(
    st.text(max_size=3000),
    st.dictionaries(st.sampled_from(sorted(FLOW.answer_ids)), st.text(max_size=600), max_size=6),
)
def test_position_never_raises(intention: str, answers: dict[str, str]) -> None:
    """Any intention and any answers give a turn or feedback, never an exception."""
    where = position(intention, answers, FLOW)
    assert (where.turn is None) == (where.feedback is not None)
