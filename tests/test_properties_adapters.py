"""Hypothesis properties of the two LLM ports: input of any shape, never an exception (D41).

``MockLLMAdapter`` (adapter.py) and Preflights' port ``FsmLLMAdapter``
(integrations/preflights/adapter.py) take ``session_state``, answers and ``heuristics_config``
from a caller the engine does not control; whatever they are given, each call answers, and garbage
is never answered as a finished session (issue 23, items 3 and 4).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from preflights.application.types import SessionSnapshot as PfSessionSnapshot
from preflights.core.types import default_v1_heuristics

from preflight_fsm import ClarificationMachine, InvalidSnapshot, MockLLMAdapter, default_flow
from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.snapshot import parse_snapshot

FLOW = default_flow()
IDS = ["change_category", "change_category__other", "auth_strategy", "db_type", "foo", ""]
VALUES = [
    "OAuth",
    "Database",
    "Other (specify)",
    "tbd",
    "\u03a4\u0392\u0391",
    "",
    "\udcff",
    "x" * 600,
]
FIELDS = ["intention", "asked_questions", "answered_questions", "missing_info", "answers"]

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.sampled_from(VALUES + IDS), st.text()
)
shapes = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.tuples(children, children),
        st.dictionaries(st.sampled_from(IDS + FIELDS) | st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)
answer_shapes = st.one_of(
    shapes, st.dictionaries(st.sampled_from(IDS), shapes, max_size=4), st.builds(object)
)


@dataclasses.dataclass(frozen=True)
class Foreign:
    """Any dataclass: Preflights' four fields, some of them, or none."""

    intention: Any = None
    asked_questions: Any = None
    answered_questions: Any = None
    missing_info: Any = None


def session_states() -> st.SearchStrategy[Any]:
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Infra"})
    snapshot = machine.snapshot()
    return st.one_of(
        shapes,
        st.builds(Foreign, shapes, shapes, shapes, shapes),
        st.builds(PfSessionSnapshot, shapes, shapes, shapes, shapes),
        st.just(snapshot),
        st.just(snapshot.model_dump_json()),
        st.just(snapshot.model_dump(mode="json")),
        st.fixed_dictionaries({}, optional={f: shapes for f in FIELDS}),
    )


configs = st.one_of(st.none(), st.just(default_v1_heuristics()), shapes, st.builds(object))
intentions = st.one_of(st.sampled_from(["Add OAuth login", "Deploy the API", ""]), shapes)
ADAPTERS = [MockLLMAdapter(), FsmLLMAdapter()]


def is_complete(state: Any) -> bool:
    """True when ``state`` is a finished session: a Done snapshot or a four-field one with
    nothing missing."""
    if isinstance(state, PfSessionSnapshot | Foreign):
        state = {f: getattr(state, f) for f in FIELDS[:4]}
        state = {k: list(v) if isinstance(v, list | tuple) else v for k, v in state.items()}
    try:
        snapshot = parse_snapshot(state)
    except (InvalidSnapshot, TypeError):
        return False
    return (snapshot.is_minimal and not snapshot.missing_info) or snapshot.state == "Done"


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    # Every refusal is logged by design; thousands of warnings would only slow the run.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
@given(intention=intentions, config=configs, state=session_states())
def test_generate_questions_answers_every_session_state_and_never_calls_garbage_finished(
    adapter: Any, intention: Any, config: Any, state: Any
) -> None:
    """A port answers any input; progress 1.0 only for a session that really finished."""
    response = adapter.generate_questions(intention, config, session_state=state)
    # Preflights' port also replays answers a state carries (AnsweredSnapshot): those may finish.
    if response.progress == 1.0 and not isinstance(adapter, FsmLLMAdapter):
        assert is_complete(state)
    assert len(response.questions) <= 2


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
@given(intention=intentions, answers=answer_shapes, config=configs)
def test_extract_decision_patch_answers_every_input_with_a_patch_or_none(
    adapter: Any, intention: Any, answers: Any, config: Any
) -> None:
    """A port never raises for its answers or config; a patch holds no placeholder."""
    patch = adapter.extract_decision_patch(intention, answers, config)
    if patch is not None:
        assert all(value.casefold() not in FLOW.placeholders for _, value in patch.fields)


def test_preflights_port_answers_a_pair_list_with_an_empty_pair() -> None:
    """Issue 23 item 3: ``{"answers": [[]]}`` as session_state is turn 1, not an IndexError."""
    response = FsmLLMAdapter().generate_questions(
        "Improve the feedback form",
        default_v1_heuristics(),
        session_state={"answers": [[]]},  # type: ignore[arg-type]
    )
    assert ("change_category",) == response.missing_info


def test_preflights_port_extracts_nothing_from_answers_that_are_none() -> None:
    """Issue 23 item 3: ``extract_decision_patch(i, None, cfg)`` is None, not an exception."""
    patch = FsmLLMAdapter().extract_decision_patch(
        "Add OAuth login",
        None,  # type: ignore[arg-type]
        default_v1_heuristics(),
    )
    assert patch is None
