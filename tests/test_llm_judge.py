"""The judge: what a reply must share with the engine's turn and patch, rule by rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

pytest.importorskip("preflights")

from preflights.core.types import DecisionPatch as PfDecisionPatch

from preflight_fsm.flow import default_flow
from preflight_fsm.integrations.preflights import FsmLLMAdapter, to_preflights_response
from preflight_fsm.llm.guard import complete_turn
from preflight_fsm.llm.judge import judge_patch, judge_turn, phase

FLOW = default_flow()
OTHER = FLOW.other_option


def engine_turn(intention: str = "Add OAuth login", **answers: str) -> Any:
    """The engine's turn as Preflights' LLMResponse."""
    where = FsmLLMAdapter().position(intention, answers)
    assert where.turn is not None
    return to_preflights_response(where.turn)


def rules(reply: Any, reference: Any) -> list[str]:
    return [d.rule for d in judge_turn(reply, reference, FLOW)]


def test_the_engines_own_turn_agrees() -> None:
    """No disagreement with itself."""
    assert [] == rules(engine_turn(), engine_turn())


def test_another_wording_agrees() -> None:
    """The question text is the LLM's to choose."""
    reference = engine_turn()
    first = dataclasses.replace(reference.questions[0], question="How should people sign in?")
    reply = dataclasses.replace(reference, questions=(first, *reference.questions[1:]))
    assert [] == rules(reply, reference)


def test_another_question_id_is_a_questions_disagreement() -> None:
    """The position's id, or the engine's next step cannot read the answer."""
    reference = engine_turn()
    first = dataclasses.replace(reference.questions[0], id="login_method")
    reply = dataclasses.replace(reference, questions=(first,))
    assert "questions" in rules(complete_turn(reply, reference), reference)


def test_a_missing_companion_is_completed_from_the_engines_turn() -> None:
    """Preflights' schema cannot send it: completed, then judged equal."""
    reference = engine_turn()
    reply = dataclasses.replace(reference, questions=reference.questions[:1])
    assert [] == rules(complete_turn(reply, reference), reference)


def test_another_missing_info_is_a_missing_info_disagreement() -> None:
    """What the position still needs is the engine's."""
    reference = engine_turn()
    reply = dataclasses.replace(reference, missing_info=("auth_strategy", "auth_library"))
    assert "missing_info" in rules(reply, reference)


@pytest.mark.parametrize(("progress", "agrees"), [(0.3, True), (0.0, False), (0.99, True)])
def test_progress_agrees_within_the_engines_phase(progress: float, agrees: bool) -> None:
    """Between 0 and 1 while a field is asked: any value there agrees, 0.0 does not."""
    reference = engine_turn()
    reply = dataclasses.replace(reference, progress=progress)
    assert agrees == ("progress" not in rules(reply, reference))


def test_another_hint_is_a_hint_disagreement() -> None:
    """Authentication is an ADR; "task" is not the engine's hint."""
    reference = engine_turn()
    assert ["hint"] == rules(dataclasses.replace(reference, decision_hint="task"), reference)


def test_phases() -> None:
    """0.0 is the start, 1.0 done, anything else between."""
    assert ("start", "between", "done") == (phase(0.0), phase(0.5), phase(1.0))


def test_a_patch_equal_but_for_case_in_names_agrees() -> None:
    """Names compare case-insensitively; values exactly."""
    reply = PfDecisionPatch(category="authentication", fields=(("strategy", "OAuth"),))
    reference = PfDecisionPatch(category="Authentication", fields=(("Strategy", "OAuth"),))
    assert [] == judge_patch(reply, reference)


def test_a_value_in_other_case_is_another_decision() -> None:
    """ "oauth" is not what the answers give."""
    reply = PfDecisionPatch(category="Authentication", fields=(("Strategy", "oauth"),))
    reference = PfDecisionPatch(category="Authentication", fields=(("Strategy", "OAuth"),))
    assert ["patch"] == [d.rule for d in judge_patch(reply, reference)]


def test_a_patch_where_the_engine_has_none_is_a_disagreement() -> None:
    """A declined session has no decision (C1)."""
    reply = PfDecisionPatch(category="Other", fields=(("Description", "Implementation"),))
    assert "give none" in judge_patch(reply, None, answers={"change_category": "tbd"})[0].message
