"""Hypothesis properties over crafted flow files (issue 23): what a flow file may hold.

A flow file is input like any other: any bytes as TOML, any data as a flow. Each is refused with
InvalidFlow, or it is a flow whose sessions, whatever they are answered, raise only documented
errors, snapshot and restore to the same session, and draw as diagrams. ``make fuzz`` runs these
with many more inputs.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from preflight_fsm import (
    ClarificationMachine,
    FlowRegistry,
    InvalidAnswers,
    InvalidFlow,
    InvalidIntention,
    SessionFinished,
)
from preflight_fsm.diagrams import flow_graph, to_dot, to_mermaid
from preflight_fsm.engine import engine_for
from preflight_fsm.flow import OTHER_SUFFIX, Flow, flow_from_data, load_flow

# Texts a hostile or careless flow file holds: plain words, look-alikes and invisible characters,
# line breaks (a DOT injection), quotes and braces, texts at and past a snapshot's 200.
TRICKY = ["Mobile", "Other (specify)", "other", "Something else", "a\nb", 'x"];evil[', "{}",
          "\u202eRTL", "\u0422\u0412\u0410", "\u3164", "tab\there", "", "   ", "C" * 200,
          "C" * 201, "\u00e9"]  # fmt: skip
texts = st.one_of(st.sampled_from(TRICKY), st.text(max_size=24))
ids = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True),
    st.sampled_from(["change_category", "description", "q__other", "Bad-Id", "c" * 201]),
)
questions = st.fixed_dictionaries(
    {
        "id": ids,
        "text": texts,
        "options": st.lists(texts, min_size=0, max_size=4),
        "field": texts,
    }
)
categories = st.fixed_dictionaries(
    {
        "name": texts,
        "hint": st.sampled_from(["task", "adr", "unsure", "maybe"]),
        "question": questions,
    },
    optional={
        "secondary": st.lists(st.fixed_dictionaries({"id": ids, "field": texts}), max_size=2),
        "keywords": st.lists(texts, max_size=3),
    },
)
limits = st.fixed_dictionaries(
    {},
    optional={
        "max_turns": st.integers(-1, 12),
        "max_intention_chars": st.sampled_from([0, 1, 2000, 100_000, 100_001, 10**9]),
        "max_answer_chars": st.sampled_from([0, 1, 500, 100_000, 100_001]),
        "max_answers_per_step": st.integers(0, 1001),
    },
)
flow_data = st.fixed_dictionaries(
    {},
    optional={
        "name": texts,
        "other_option": texts,
        "categories": st.lists(categories, min_size=0, max_size=4),
        "placeholders": st.lists(texts, max_size=4),
        "limits": limits,
        "category_question": st.fixed_dictionaries({}, optional={"id": ids, "text": texts}),
        "other_category": st.fixed_dictionaries(
            {}, optional={"name": texts, "description_id": ids, "field": texts}
        ),
        "unknown_key": st.integers(),
    },
)


def _flow(data: dict[str, Any]) -> Flow | None:
    """The flow ``data`` describes, or None when it is refused: only ever with InvalidFlow, when
    it is loaded or when its machine is built (a flow whose states cannot all be reached)."""
    try:
        flow = flow_from_data(data)
        engine_for(flow)
    except InvalidFlow as refused:
        problem = str(refused)
    else:
        event("flow loaded")
        return flow
    assert problem, "a refusal says what is wrong"
    event("flow refused")
    return None


def _answers(flow: Flow, draw: st.DataObject) -> dict[str, Any]:
    """One step's answers for ``flow``: its own options and ids, the Other shapes, garbage."""
    choices = [flow.category_question.id] + [c.question.id for c in flow.categories]
    known = sorted(flow.answer_ids)
    options = [c.name for c in flow.categories] + [
        o for c in flow.categories for o in c.question.options
    ]
    value = st.one_of(
        st.sampled_from([*options, flow.other_option, "Other (specify)", "", "TBD"]),
        texts,
        st.none(),
        st.integers(),
    )
    answers: dict[str, Any] = draw.draw(
        st.dictionaries(st.sampled_from(known), value, max_size=3), label="answers"
    )
    if draw.draw(st.booleans(), label="other with text"):
        qid = draw.draw(st.sampled_from(choices), label="other question")
        answers.update({qid: "Other (specify)", f"{qid}{OTHER_SUFFIX}": "KaiOS"})
    return answers


@given(flow_data)
def test_crafted_flow_data_is_a_flow_or_invalid_flow(data: dict[str, Any]) -> None:
    """Any data is refused with InvalidFlow or loads as a flow whose names, ids and texts a
    snapshot and a diagram can hold: one line of at most 200 characters each."""
    flow = _flow(data)
    if flow is None:
        return
    for text in (flow.name, flow.other_option, *(c.name for c in flow.categories)):
        assert "\n" not in text
        assert len(text) <= 200
    assert flow.limits.max_answer_chars <= 100_000


@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_bytes_as_a_flow_file_load_or_raise_invalid_flow(content: bytes) -> None:
    """A flow file of any bytes loads or raises InvalidFlow naming the file, nothing else."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "crafted.toml"
        path.write_bytes(content)
        try:
            load_flow(path)
        except InvalidFlow as refused:
            problem = str(refused)
        else:
            return
    assert "crafted.toml" in problem


@given(flow_data, st.sampled_from(["Ship the app", "Migrate the database", "x"]), st.data())
def test_sessions_on_a_crafted_flow_keep_every_promise(
    data: dict[str, Any], intention: str, draw: st.DataObject
) -> None:
    """On any flow that loads: any answers give a turn or a documented refusal that changes
    nothing; every position snapshots to JSON that restores to the same session; the flow draws
    as DOT and Mermaid."""
    flow = _flow(data)
    if flow is None:
        return
    to_dot(flow_graph(flow))
    to_mermaid(flow_graph(flow))
    registry = FlowRegistry(flow)
    try:
        machine = ClarificationMachine(intention, flow)
    except InvalidIntention:
        return
    for _ in range(draw.draw(st.integers(0, 4), label="steps")):
        before = machine.snapshot()
        try:
            turn = machine.step(_answers(flow, draw))
        except (InvalidAnswers, SessionFinished):
            assert before == machine.snapshot(), "a refused step changes nothing"
            continue
        if turn.patch is not None:
            assert all(value.strip() for _, value in turn.patch.fields)
        text = machine.snapshot().model_dump_json()
        restored = ClarificationMachine.from_snapshot(json.loads(text), registry)
        assert machine.snapshot() == restored.snapshot()
