"""table.py: every row of the transition table is taken by a scenario (C1).

Every edge of ``transition_table()`` must have a scenario below that takes it; an edge without
one fails ``test_every_edge_has_a_scenario``, so adding a transition without a test fails.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from preflight_fsm import ClarificationMachine, Edge, transition_table

OTHER = "Other (specify)"
EdgeKey = tuple[str, str, str, tuple[str, ...]]


@dataclass(frozen=True)
class Scenario:
    """A session: its intention and the answers of each step, and where it must end."""

    name: str
    intention: str
    steps: tuple[Mapping[str, Any], ...]
    final_state: str
    branch: str = ""
    expected_fields: tuple[tuple[str, str], ...] | None = field(default=None)


def key(edge: Edge) -> EdgeKey:
    return (edge.source, edge.trigger, edge.dest, edge.guards)


def guard_name(func: str | Callable[..., bool | None]) -> str:
    """The name of a guard the machine runs; the engine registers functions, never names."""
    assert not isinstance(func, str), func
    return func.__name__


LOCK = "pending_question_answered"

# (source, trigger, dest, guards) -> the scenarios that must take that edge.
SCENARIOS: dict[EdgeKey, tuple[Scenario, ...]] = {
    ("NeedCategory", "start", "NeedPrimaryField", ("intention_names_one_category",)): (
        Scenario("keyword shortcut (C4)", "Add OAuth login", (), "NeedPrimaryField"),
    ),
    ("NeedCategory", "answer", "NeedPrimaryField", (LOCK, "category_is_known")): (
        Scenario(
            "category picked from the options",
            "Improve the feedback form",
            ({"change_category": "Database"},),
            "NeedPrimaryField",
        ),
        Scenario(
            "custom category text that names a category (C6)",
            "Improve the feedback form",
            ({"change_category": OTHER, "change_category__other": "our postgres db"},),
            "NeedPrimaryField",
        ),
    ),
    ("NeedCategory", "answer", "Done", (LOCK, "category_is_custom")): (
        Scenario(
            "custom category text naming no category -> Other patch (C6)",
            "Improve the feedback form",
            ({"change_category": "Billing"},),
            "Done",
            expected_fields=(("Description", "Improve the feedback form"),),
        ),
    ),
    ("NeedCategory", "answer", "NeedOther", (LOCK, "other_text_missing", "budget_left")): (
        Scenario(
            "Other (specify) without text (C5)",
            "Improve the feedback form",
            ({"change_category": OTHER},),
            "NeedOther",
        ),
    ),
    ("NeedCategory", "answer", "NoPatch", (LOCK,)): (
        Scenario(
            "category declined with a placeholder (C5)",
            "Improve the feedback form",
            ({"change_category": "TBD"},),
            "NoPatch",
            branch="declined",
        ),
    ),
    ("NeedPrimaryField", "answer", "Done", (LOCK, "field_is_concrete")): (
        Scenario(
            "field answered with an option",
            "Add OAuth login",
            ({"auth_strategy": "oauth"},),
            "Done",
            expected_fields=(("Strategy", "OAuth"),),
        ),
        Scenario(
            "field answered with a custom value (C5 tolerance)",
            "Add OAuth login",
            ({"auth_strategy": "SAML"},),
            "Done",
            expected_fields=(("Strategy", "SAML"),),
        ),
    ),
    ("NeedPrimaryField", "answer", "NeedOther", (LOCK, "other_text_missing", "budget_left")): (
        Scenario(
            "field: Other (specify) without text",
            "Add OAuth login",
            ({"auth_strategy": OTHER, "auth_strategy__other": ""},),
            "NeedOther",
        ),
    ),
    ("NeedPrimaryField", "answer", "NoPatch", (LOCK,)): (
        Scenario(
            "field declined (C5)",
            "Add OAuth login",
            ({"auth_strategy": ""},),
            "NoPatch",
            branch="declined",
        ),
        Scenario(
            "field: Other without text on the last turn of the budget (C3)",
            "Improve the feedback form",
            (
                {"change_category": OTHER},
                {"change_category__other": "database"},
                {"db_type": OTHER},
            ),
            "NoPatch",
            branch="no budget",
        ),
    ),
    (
        "NeedOther",
        "answer",
        "NeedPrimaryField",
        (LOCK, "text_names_known_category", "budget_left"),
    ): (
        Scenario(
            "category text names a category (C6)",
            "Improve the feedback form",
            ({"change_category": OTHER}, {"change_category__other": "Deploy with Docker"}),
            "NeedPrimaryField",
        ),
    ),
    ("NeedOther", "answer", "Done", (LOCK, "text_is_concrete")): (
        Scenario(
            "field text given in NeedOther",
            "Add OAuth login",
            ({"auth_strategy": OTHER}, {"auth_strategy__other": "SAML"}),
            "Done",
            expected_fields=(("Strategy", "SAML"),),
        ),
        Scenario(
            "category text naming no category -> Other patch",
            "Improve the feedback form",
            ({"change_category": OTHER}, {"change_category__other": "Billing"}),
            "Done",
            expected_fields=(("Description", "Improve the feedback form"),),
        ),
    ),
    ("NeedOther", "answer", "NoPatch", (LOCK,)): (
        Scenario(
            "NeedOther text declined with a placeholder",
            "Add OAuth login",
            ({"auth_strategy": OTHER}, {"auth_strategy__other": "n/a"}),
            "NoPatch",
        ),
    ),
}

ALL = [(k, s) for k, scenarios in SCENARIOS.items() for s in scenarios]


def run(scenario: Scenario) -> ClarificationMachine:
    machine = ClarificationMachine(scenario.intention)
    for answers in scenario.steps:
        machine.step(answers)
    return machine


@pytest.mark.parametrize("edge", transition_table(), ids=lambda e: f"{e.source}-{e.label}-{e.dest}")
def test_every_edge_has_a_scenario(edge: Edge) -> None:
    """Every edge of the machine's own table is exercised by at least one scenario (C1)."""
    assert key(edge) in SCENARIOS, f"edge {edge} has no scenario in SCENARIOS: add one"


def test_no_scenario_names_an_edge_the_machine_lacks() -> None:
    """Scenarios describe real edges only: the table and the scenarios list the same edges."""
    assert set(SCENARIOS) == {key(e) for e in transition_table()}


@pytest.mark.parametrize(("edge_key", "scenario"), ALL, ids=[s.name for _, s in ALL])
def test_scenario_takes_its_edge(edge_key: EdgeKey, scenario: Scenario) -> None:
    """The scenario's session takes the edge it is filed under and ends where it says."""
    machine = run(scenario)
    taken = {(t.source, t.trigger, t.dest, t.guards) for t in machine.trace}
    assert edge_key in taken
    assert scenario.final_state == machine.state
    if scenario.expected_fields is not None:
        patch = machine.turn.patch
        assert patch is not None
        assert scenario.expected_fields == patch.fields


def test_edges_are_tried_in_table_order() -> None:
    """C1: from each state the edges are listed in the contract's order, the fallback last."""
    by_source: dict[str, list[str]] = {}
    for edge in transition_table():
        if edge.trigger == "answer":
            by_source.setdefault(edge.source, []).append(edge.dest)
    assert by_source == {
        "NeedCategory": ["NeedPrimaryField", "Done", "NeedOther", "NoPatch"],
        "NeedPrimaryField": ["Done", "NeedOther", "NoPatch"],
        "NeedOther": ["NeedPrimaryField", "Done", "NoPatch"],
    }


def test_every_answer_edge_carries_the_lock() -> None:
    """C3: the lock guard is the first condition of every `answer` edge, visible in the table."""
    assert all(e.guards[0] == LOCK for e in transition_table() if e.trigger == "answer")


def test_start_without_one_category_stays_in_need_category() -> None:
    """C1: `start` with its guard false changes nothing; no transition is recorded."""
    machine = ClarificationMachine("Add login API endpoint")
    assert "NeedCategory" == machine.state
    assert () == machine.trace


def test_terminal_states_have_no_outgoing_edges() -> None:
    """C1: Done and NoPatch are terminal."""
    assert not [e for e in transition_table() if e.source in ("Done", "NoPatch")]


def test_the_machine_runs_exactly_the_declared_rows() -> None:
    """C1: the shared machine's transitions are TABLE's rows, in order, guards by name."""
    from preflight_fsm.engine import engine_for
    from preflight_fsm.flow import default_flow
    from preflight_fsm.table import TABLE

    machine = engine_for(default_flow()).machine
    running = [
        (event.name, t.source, t.dest, tuple(guard_name(c.func) for c in t.conditions))
        for event in machine.events.values()
        for source in event.transitions.values()
        for t in source
    ]
    declared = [(r["trigger"], r["source"], r["dest"], tuple(r["conditions"])) for r in TABLE]
    assert sorted(declared) == sorted(running)
    assert [key(e)[:3] for e in transition_table()] == [
        (r["source"], r["trigger"], r["dest"]) for r in TABLE
    ]


def test_every_row_names_a_guard_and_an_effect_that_exist() -> None:
    """C1: the table refers to guards.py by name; a typo fails here, not in a session."""
    from preflight_fsm.guards import EFFECTS, GUARDS
    from preflight_fsm.table import TABLE

    assert all(set(r["conditions"]) <= set(GUARDS) and r["before"] in EFFECTS for r in TABLE)
