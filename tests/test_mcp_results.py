"""Every result the tools return validates against the output schema they publish."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from preflight_fsm import ClarificationMachine
from preflight_fsm.errors import InvalidAnswers, SessionExpired
from preflight_fsm.mcp.errors import failure_of
from preflight_fsm.mcp.results import (
    ClarificationOutcome,
    SessionOutcome,
    outcome_of,
    session_view,
    tool_result,
)
from preflight_fsm.store import MemoryStore, Sessions

SCHEMA = ClarificationOutcome.model_json_schema()


def _turns() -> dict[str, Any]:
    asking = ClarificationMachine("Add OAuth login")
    done = ClarificationMachine("Add OAuth login")
    done.step({"auth_strategy": "OAuth"}, answered_by="user_form")
    stopped = ClarificationMachine("Add OAuth login")
    stopped.step({"auth_strategy": ""})
    try:
        ClarificationMachine("Add OAuth login").step({"x": "y"})
    except InvalidAnswers as error:
        refused = failure_of(error, "s1")
    return {
        "needs_clarification": outcome_of("s1", asking.turn),
        "completed": outcome_of("s1", done.turn, done.decided_by),
        "stopped": outcome_of("s1", stopped.turn),
        "error": refused,
        "error without feedback": failure_of(SessionExpired("s1", 60)),
    }


RESULTS = _turns()


@pytest.mark.parametrize("name", list(RESULTS))
def test_each_status_validates_against_the_published_schema(name: str) -> None:
    data = tool_result(RESULTS[name]).structured_content
    jsonschema.validate(data, SCHEMA)
    assert RESULTS[name].model_dump(mode="json", exclude_none=True) == data


@pytest.mark.parametrize("name", list(RESULTS))
def test_the_text_content_is_the_same_json(name: str) -> None:
    result = tool_result(RESULTS[name])
    assert result.structured_content == json.loads(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("name", list(RESULTS))
def test_the_text_content_is_what_json_dumps_writes(name: str) -> None:
    """pydantic-core writes the text: byte for byte json.dumps(..., indent=2) of the data."""
    result = tool_result(RESULTS[name])
    data = result.structured_content
    expected = json.dumps(data, ensure_ascii=False, indent=2)
    assert expected == result.content[0].text  # type: ignore[union-attr]


def test_the_output_schema_validates_what_the_discriminated_union_does() -> None:
    """Written out with anyOf, the schema refuses a result whose status names another shape."""
    data = tool_result(RESULTS["completed"]).structured_content
    assert data is not None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "status": "needs_clarification"}, SCHEMA)
    assert "$ref" not in json.dumps(SCHEMA)


def test_the_output_schema_is_an_object_schema() -> None:
    assert "object" == SCHEMA["type"]


def test_a_session_view_validates_against_get_sessions_schema() -> None:
    sessions = Sessions(MemoryStore())
    state = sessions.start("Add OAuth login")
    machine, _ = sessions.load(state.id)
    data = tool_result(session_view(state, machine.trace)).structured_content
    jsonschema.validate(data, SessionOutcome.model_json_schema())
    assert ["start"] == [t["trigger"] for t in data["trace"]]


def test_a_finished_session_view_says_who_supplied_each_step_and_transition() -> None:
    """get_session: each step and each of its transitions carry answered_by; the start none."""
    sessions = Sessions(MemoryStore())
    started = sessions.start("Add OAuth login")
    state = sessions.answer(started.id, {"auth_strategy": "OAuth"}, answered_by="agent")
    machine, _ = sessions.load(state.id)
    data = tool_result(session_view(state, machine.trace)).structured_content
    jsonschema.validate(data, SessionOutcome.model_json_schema())
    assert [{"step": 1, "answered_by": "agent", "answers": {"auth_strategy": "OAuth"}}] == (
        data["steps"]
    )
    assert [None, "agent"] == [t.get("answered_by") for t in data["trace"]]
    assert [
        {"name": "Category", "answered_by": "intention"},
        {"name": "Strategy", "answered_by": "agent"},
    ] == data["decided_by"]
