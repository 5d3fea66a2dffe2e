"""The turn as plain data (``turn_data.py``, issue 32): each named tuple is its model's fields,
and what the command line prints from it is what the model would give."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel

from preflight_fsm import DecisionPatch, Question, Turn
from preflight_fsm.patch_data import PatchData
from preflight_fsm.session import Session
from preflight_fsm.turn import turn_of
from preflight_fsm.turn_data import QuestionData, TurnData, turn_data
from test_turn import SESSIONS


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    return {n: f.default for n, f in model.model_fields.items() if not f.is_required()}


@pytest.mark.parametrize(
    ("plain", "model"),
    [(QuestionData, Question), (PatchData, DecisionPatch), (TurnData, Turn)],
    ids=["question", "patch", "turn"],
)
def test_each_plain_type_has_its_models_fields_in_order_with_its_defaults(
    plain: type[NamedTuple], model: type[BaseModel]
) -> None:
    """A field added to a model, moved or given another default fails here."""
    assert (tuple(model.model_fields), _defaults(model)) == (plain._fields, plain._field_defaults)


@pytest.mark.parametrize("session", [s for _, s in SESSIONS], ids=[n for n, _ in SESSIONS])
def test_a_plain_turn_prints_as_the_model_dumps_it(session: Session) -> None:
    """``--json`` prints the plain turn: every journey's turn, as ``model_dump(mode="json")``."""
    assert turn_of(session).model_dump(mode="json") == turn_data(session).to_json()


@pytest.mark.parametrize("session", [s for _, s in SESSIONS], ids=[n for n, _ in SESSIONS])
def test_a_plain_turn_is_finished_where_the_model_is(session: Session) -> None:
    """``finished`` reads the same on both."""
    assert turn_of(session).finished == turn_data(session).finished
