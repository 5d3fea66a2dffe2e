"""The sessions every benchmark runs, ours and Preflights 1.1.4's, with their expected outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from preflight_fsm import ClarificationMachine, DecisionPatch, Turn

__all__ = [
    "LIVE",
    "SCENARIOS",
    "Scenario",
    "fresh",
    "live_session",
    "ours",
    "theirs",
    "theirs_adapter",
]


@dataclass(frozen=True)
class Scenario:
    """One intention, the answers sent turn by turn, and the patch our engine must end with."""

    name: str
    intention: str
    steps: tuple[dict[str, str], ...]
    patch: DecisionPatch
    their_answers: dict[str, str]
    """The same choices, answered to the questions Preflights' own mock asks."""


SCENARIOS = (
    # The keyword shortcut: turn 1 asks the field, one step ends the session.
    Scenario(
        "shortcut",
        "Add OAuth login to the admin dashboard",
        ({"auth_strategy": "OAuth"},),
        DecisionPatch(category="Authentication", fields=(("Strategy", "OAuth"),)),
        {"auth_strategy": "OAuth", "auth_library": "passport"},
    ),
    # No keyword: turn 1 asks the category, turn 2 the field.
    Scenario(
        "two_phase",
        "Speed up the checkout page",
        ({"change_category": "Database"}, {"db_type": "PostgreSQL"}),
        DecisionPatch(category="Database", fields=(("Type", "PostgreSQL"),)),
        {"category": "Database", "description": "PostgreSQL"},
    ),
    # "Other (specify)" without its text: turn 2 asks for the text alone (NeedOther).
    Scenario(
        "other",
        "Speed up the checkout page",
        ({"change_category": "Other (specify)"}, {"change_category__other": "Payments"}),
        DecisionPatch(category="Other", fields=(("Description", "Speed up the checkout page"),)),
        {"category": "Other (specify)", "category__other": "Payments", "description": "Payments"},
    ),
)


def fresh(scenario: Scenario) -> Scenario:
    """The scenario with inputs of its own: a new intention string, new answer dicts.

    A service never sees the same string object twice; sharing one would let any memo keyed by
    identity hit across sessions and flatter the figures.
    """
    return Scenario(
        scenario.name,
        scenario.intention.encode().decode(),
        tuple(
            {k.encode().decode(): v.encode().decode() for k, v in step.items()}
            for step in scenario.steps
        ),
        scenario.patch,
        {k.encode().decode(): v.encode().decode() for k, v in scenario.their_answers.items()},
    )


LIVE = SCENARIOS[1]
"""The live session of the step, snapshot and memory figures: two-phase, turn 1 answered."""


def ours(scenario: Scenario) -> Turn:
    """A whole session on our engine: construct, then every step to Done."""
    machine = ClarificationMachine(scenario.intention)
    turn = machine.turn
    for answers in scenario.steps:
        turn = machine.step(answers)
    return turn


def live_session() -> ClarificationMachine:
    """A session waiting for its second turn (its first answered), as a service holds many."""
    scenario = fresh(LIVE)
    machine = ClarificationMachine(scenario.intention)
    machine.step(scenario.steps[0])
    return machine


def theirs_adapter() -> tuple[Any, Any]:
    """Preflights 1.1.4's MockLLMAdapter and its default heuristics, or ImportError."""
    from preflights.adapters.mock_llm import MockLLMAdapter
    from preflights.core.types import default_v1_heuristics

    return MockLLMAdapter(), default_v1_heuristics()


def theirs(adapter: Any, heuristics: Any, scenario: Scenario) -> Any:
    """A whole session on Preflights' mock: the questions once, then the patch from the answers."""
    adapter.generate_questions(scenario.intention, heuristics)
    return adapter.extract_decision_patch(scenario.intention, scenario.their_answers, heuristics)
