"""The flow as plain data (``flow_data.py``): each named tuple mirrors its model, the default
flow's tables are the shipped flow file's, and the fingerprints computed from plain data are the
models' to the byte (issue 32; C9, C10: no stored snapshot, seal or signature changes)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import BaseModel

from preflight_fsm.engine import engine_for
from preflight_fsm.errors import InvalidFlow
from preflight_fsm.flow import (
    Category,
    CategoryQuestion,
    ChoiceQuestion,
    Flow,
    Limits,
    OtherCategory,
    SecondaryField,
    default_flow,
    flow_from_data,
    flow_model,
    load_flow,
)
from preflight_fsm.flow_data import (
    DEFAULT_FLOW,
    DEFAULT_FLOW_FILE,
    CategoryData,
    CategoryQuestionData,
    ChoiceQuestionData,
    FlowData,
    LimitsData,
    OtherCategoryData,
    SecondaryFieldData,
    flow_json,
    plain_dict,
)
from preflight_fsm.flow_registry import FlowRegistry, default_registry

PAIRS: list[tuple[type[BaseModel], type[tuple[Any, ...]]]] = [
    (ChoiceQuestion, ChoiceQuestionData),
    (SecondaryField, SecondaryFieldData),
    (Category, CategoryData),
    (CategoryQuestion, CategoryQuestionData),
    (OtherCategory, OtherCategoryData),
    (Limits, LimitsData),
    (Flow, FlowData),
]
WORDING: dict[str, Any] = {
    "category_question": {"text": True},
    "categories": {"__all__": {"question": {"text": True}}},
}
"""What Flow.fingerprint left out when it was computed by pydantic (D261)."""


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    return {
        name: field.get_default(call_default_factory=True)
        for name, field in model.model_fields.items()
        if not field.is_required()
    }


@pytest.mark.parametrize(("model", "plain"), PAIRS, ids=[m.__name__ for m, _ in PAIRS])
def test_each_plain_form_has_its_models_fields_in_order(
    model: type[BaseModel], plain: type[tuple[Any, ...]]
) -> None:
    """A named tuple mirrors its model field for field, in the model's order."""
    assert tuple(model.model_fields) == plain._fields  # type: ignore[attr-defined]


@pytest.mark.parametrize(("model", "plain"), PAIRS, ids=[m.__name__ for m, _ in PAIRS])
def test_each_plain_form_has_its_models_defaults(
    model: type[BaseModel], plain: type[tuple[Any, ...]]
) -> None:
    """A named tuple's defaults are its model's (nested defaults as their plain forms)."""
    expected = {
        name: value.plain if isinstance(value, Flow) else _plain_of(value)
        for name, value in _defaults(model).items()
    }
    assert expected == plain._field_defaults  # type: ignore[attr-defined]


def _plain_of(value: Any) -> Any:
    for model, plain in PAIRS:
        if isinstance(value, model):
            return plain(*(_plain_of(getattr(value, name)) for name in plain._fields))  # type: ignore[attr-defined]
    return value


def test_the_default_flow_is_the_shipped_flow_file() -> None:
    """flows/default.toml, the commented example, holds the same flow as DEFAULT_FLOW."""
    assert DEFAULT_FLOW == load_flow(DEFAULT_FLOW_FILE).plain


def test_the_default_flows_model_is_validated_from_its_plain_form() -> None:
    """default_flow() is DEFAULT_FLOW's model, and its plain form is DEFAULT_FLOW."""
    assert DEFAULT_FLOW == default_flow().plain
    assert default_flow() is flow_model(DEFAULT_FLOW)


def test_the_default_flows_fingerprints_are_pinned_on_its_plain_form() -> None:
    """The plain default flow answers to the fingerprints every stored default session carries,
    computed without a model."""
    assert ("f89c69ac6331d44d", "933558696d03ac0d") == DEFAULT_FLOW.fingerprints


def test_the_engine_and_default_registry_build_no_flow_model() -> None:
    """A session on the default flow, run on the default registry's flow, builds no Flow
    (issue 32: the command path; what a command imports is the command line's pin)."""
    script = """
import gc, sys
from preflight_fsm.engine import engine_for
from preflight_fsm.flow_data import DEFAULT_FLOW
from preflight_fsm.flow_registry import default_registry
registry = default_registry()
engine = engine_for(registry.get_data(DEFAULT_FLOW.fingerprint))
session = engine.step(engine.begin("Add OAuth login"), {"auth_strategy": "OAuth"})
assert session.position.state == "Done", session.position
flow = sys.modules.get("preflight_fsm.flow")
print(flow is not None and any(isinstance(o, flow.Flow) for o in gc.get_objects()))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "False" == done.stdout.strip()


def test_an_engine_asked_for_its_flow_answers_with_the_model_it_was_given() -> None:
    """engine_for(model).flow is that model; engine_for(plain).flow is the plain form's model."""
    flow = flow_from_data({"name": "given"})
    assert flow is engine_for(flow).flow
    assert default_flow() is engine_for(DEFAULT_FLOW).flow


def test_a_registry_of_plain_flows_answers_with_their_models() -> None:
    """FlowRegistry takes plain flows too; get() answers with the model, get_data() without."""
    registry = FlowRegistry(DEFAULT_FLOW)
    assert default_flow() is registry.get(DEFAULT_FLOW.content_fingerprint)
    assert DEFAULT_FLOW is registry.get_data(DEFAULT_FLOW.fingerprint)
    assert default_registry().current is default_flow()


def test_the_plain_answer_ids_and_category_lookup_are_the_models() -> None:
    """answer_ids and category(name) read the same off the plain form as off the model."""
    assert default_flow().answer_ids == DEFAULT_FLOW.answer_ids
    backend = DEFAULT_FLOW.category("Backend")
    assert backend is not None
    assert default_flow().category("Backend") == Category.model_validate(plain_dict(backend))
    assert None is DEFAULT_FLOW.category("backend")


# -- fingerprints: the plain JSON is the model's, byte for byte -----------------------------------

# Visible text in any script, quotes and backslashes included (what JSON escapes); numbered
# below so that names, options and ids are unique, as a valid flow's are.
words = (
    st.text(
        st.characters(categories=("L", "N", "P", "S"), include_characters=" "),
        min_size=1,
        max_size=10,
    )
    .map(str.strip)
    .filter(bool)
)
ids = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


def _numbered(categories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for n, category in enumerate(categories):
        category["name"] += f" {n}"
        category["question"]["id"] += f"_{n}"
        category["question"]["options"] = [
            f"{o} {k}" for k, o in enumerate(category["question"]["options"])
        ]
        for k, secondary in enumerate(category.get("secondary", ())):
            secondary["id"] += f"_{n}_{k}"
    return categories


categories = st.lists(
    st.fixed_dictionaries(
        {
            "name": words,
            "hint": st.sampled_from(["task", "adr", "unsure"]),
            "question": st.fixed_dictionaries(
                {
                    "id": ids,
                    "text": words,
                    "options": st.lists(words, min_size=1, max_size=3),
                    "field": words,
                }
            ),
        },
        optional={
            "secondary": st.lists(st.fixed_dictionaries({"id": ids, "field": words}), max_size=2),
            "keywords": st.lists(words, max_size=3),
        },
    ),
    max_size=3,
).map(_numbered)
flows = st.fixed_dictionaries(
    {"categories": categories},
    optional={
        "name": words,
        "other_option": words,
        "placeholders": st.lists(st.text(max_size=8), max_size=4),
        "limits": st.fixed_dictionaries(
            {},
            optional={
                "max_turns": st.integers(3, 10),
                "max_answer_chars": st.integers(1, 500),
                "max_answers_per_step": st.integers(1, 1000),
            },
        ),
        "category_question": st.fixed_dictionaries({}, optional={"id": ids, "text": words}),
        "other_category": st.fixed_dictionaries(
            {}, optional={"name": words, "description_id": ids, "field": words}
        ),
    },
)


def _valid(data: dict[str, Any]) -> Flow:
    try:
        return flow_from_data(data)
    except InvalidFlow:
        assume(False)
        raise


@given(flows)
def test_the_plain_flows_json_is_the_models_to_the_byte(data: dict[str, Any]) -> None:
    """flow_json writes what model_dump_json writes, with and without the wording, so both
    fingerprints are what pydantic's JSON gave them (any stored fingerprint stays valid)."""
    flow = _valid(data)
    assert flow.model_dump_json().encode() == flow_json(flow.plain)
    assert flow.model_dump_json(exclude=WORDING).encode() == flow_json(flow.plain, wording=False)


@given(flows)
def test_a_valid_flows_plain_form_validates_back_to_the_same_flow(data: dict[str, Any]) -> None:
    """Model to plain data and back is the same flow, fingerprints included."""
    flow = _valid(data)
    assert flow == flow_model(flow.plain)
    assert flow.fingerprints == flow_model(flow.plain).fingerprints


def test_a_copy_of_a_flow_with_other_fields_runs_on_its_own_plain_form() -> None:
    """Flow.model_copy(update=...) computes the copy's plain form afresh: it never runs on
    the engine of the flow it was copied from."""
    flow = flow_from_data({})
    copied = flow.model_copy(update={"name": "copied"})
    assert "copied" == copied.plain.name
    assert "copied" == engine_for(copied).flow_data.name
