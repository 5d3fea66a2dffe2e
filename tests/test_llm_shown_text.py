"""C5 holds for what an LLM writes: nothing invisible or deceptive reaches a person or a file.

Preflights' real Anthropic and OpenAI adapters, on the official SDKs, against ``llm_server`` on
127.0.0.1 returning such text; and a property over replies of any characters.
"""

from __future__ import annotations

from typing import Any

import pytest

import installed

pytest.importorskip("preflights")

from hypothesis import given, settings
from hypothesis import strategies as st
from preflights.adapters.mock_llm import MockLLMAdapter
from preflights.application.types import LLMResponse, Question
from preflights.core.types import DecisionPatch, default_v1_heuristics

from llm_server import LLMServer, Reply
from preflight_fsm.flow import default_flow
from preflight_fsm.llm import GuardedLLMAdapter
from preflight_fsm.llm.providers import provider_adapter
from preflight_fsm.llm.shown_text import c5_problems, patch_texts, turn_texts
from preflight_fsm.option_names import flow_options

installed.require("anthropic", "openai")

CONFIG = default_v1_heuristics()
DEADLINE = 10.0
INTENTION = "Improve the checkout flow"
OPTIONS = list(flow_options(default_flow(), "change_category") or ())


def first_turn(question: str, options: list[str]) -> dict[str, Any]:
    """A tool input asking the flow's first question, in the words given."""
    asked = {"id": "change_category", "type": "single_choice", "question": question}
    return {
        "questions": [{**asked, "options": options}],
        "missing_info": ["change_category"],
        "decision_hint": "unsure",
        "progress": 0.0,
    }


def guard_for(provider: str, server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Preflights' adapter for ``provider`` pointed at ``server``, under the guard; a deadline
    no reply nears under load, so only C5 can replace one."""
    for name, value in server.env(provider, DEADLINE).items():
        monkeypatch.setenv(name, value)
    adapter = provider_adapter(provider, deadline=DEADLINE)
    return GuardedLLMAdapter(adapter, deadline=DEADLINE)


# Each reply an attacker-controlled or careless LLM sends, by name.
DECEPTIVE = {
    "option over another": first_turn(
        "Which area?", [f"{OPTIONS[0]}\r      1. Front\u200bend", *OPTIONS[1:]]
    ),
    "tag characters": first_turn(
        "Which area?\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065", OPTIONS
    ),
    "bidi override": first_turn("Which area?\u202e", OPTIONS),
    "look-alike option": first_turn("Which area?", ["D\u0430tabase", *OPTIONS[1:]]),
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("case", sorted(DECEPTIVE))
def test_a_provider_turn_with_deceptive_text_is_replaced_by_the_engines(
    provider: str, case: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's turn is shown instead, and the replacement says C5 refused the text."""
    guard = guard_for(provider, provider_server, monkeypatch)
    provider_server.default = Reply(tool_input=DECEPTIVE[case])
    turn = guard.generate_questions(INTENTION, CONFIG)
    assert [] == c5_problems(turn_texts(turn), OPTIONS)
    assert [("contract", True)] == [
        (r.reason, r.detail.startswith("C5:")) for r in guard.replacements
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_provider_turn_in_its_own_plain_words_is_still_shown(
    provider: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C5 refuses what deceives, not the LLM's wording."""
    guard = guard_for(provider, provider_server, monkeypatch)
    provider_server.default = Reply(tool_input=first_turn("Which part changes?", OPTIONS))
    turn = guard.generate_questions(INTENTION, CONFIG)
    assert ("Which part changes?", []) == (turn.questions[0].question, list(guard.replacements))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_provider_patch_value_with_separators_never_reaches_the_decision(
    provider: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MySQL\\x1f\\x1c\\u2028`` is not MySQL: the engine's patch is the decision."""
    guard = guard_for(provider, provider_server, monkeypatch)
    fields = [{"key": "Type", "value": "MySQL\x1f\x1c\u2028"}]
    provider_server.default = Reply(
        tool_input={"status": "extracted", "category": "Database", "fields": fields}
    )
    answers: dict[str, str | tuple[str, ...]] = {"change_category": "Database", "db_type": "MySQL"}
    patch = guard.extract_decision_patch(INTENTION, answers, CONFIG)
    assert patch is not None
    assert (("Type", "MySQL"),) == patch.fields
    assert ["contract"] == [r.reason for r in guard.replacements]


class Scripted(MockLLMAdapter):
    """An LLM that words the first question and the patch with the texts given."""

    def __init__(self, question: str, option: str, value: str) -> None:
        super().__init__()
        self.texts = (question, option, value)

    def generate_questions(self, *args: Any, **kwargs: Any) -> LLMResponse:
        question, option, _ = self.texts
        asked = Question(
            id="change_category",
            type="single_choice",
            question=question,
            options=(option, *OPTIONS[1:]),
        )
        return LLMResponse((asked,), ("change_category",), "unsure", 0.0)

    def extract_decision_patch(self, *args: Any, **kwargs: Any) -> DecisionPatch:
        return DecisionPatch(category="Database", fields=(("Type", self.texts[2]),))


@settings(max_examples=150, deadline=None)
@given(
    question=st.text(max_size=12),
    option=st.sampled_from([OPTIONS[0], ""]).flatmap(lambda o: st.text(max_size=4).map(o.__add__)),
    value=st.sampled_from(["MySQL", ""]).flatmap(lambda v: st.text(max_size=4).map(v.__add__)),
)
def test_no_llm_text_of_any_characters_reaches_a_person_or_a_file_against_c5(
    question: str, option: str, value: str
) -> None:
    """Whatever an LLM writes, what the guard returns holds nothing C5 refuses."""
    guard = GuardedLLMAdapter(Scripted(question, option, value), deadline=DEADLINE)
    turn = guard.generate_questions(INTENTION, CONFIG)
    answers: dict[str, str | tuple[str, ...]] = {"change_category": "Database", "db_type": "MySQL"}
    patch = guard.extract_decision_patch(INTENTION, answers, CONFIG)
    assert [] == c5_problems([*turn_texts(turn), *patch_texts(patch)], OPTIONS)
