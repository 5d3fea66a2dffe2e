"""The engine's transitions subclasses keep transitions' own semantics (issue 6, C1).

machine.py plugs Event/Transition/Condition subclasses into transitions through its extension
points to drop per-call overhead. Here both run the same definition: every callback must fire in
the same order, with the same results, as on a stock ``transitions.Machine``.
"""

from __future__ import annotations

from typing import Any

import pytest
from transitions import Machine

from preflight_fsm.machine import _SharedMachine


class Model:
    """A plain, unregistered model, as sessions are."""

    def __init__(self, allow: bool, block: bool) -> None:
        self.state = "A"
        self.allow = allow
        self.block = block
        self.log: list[str] = []


def logger(name: str) -> Any:
    def callback(model: Model) -> None:
        model.log.append(name)

    callback.__name__ = name
    return callback


def allowed(model: Model) -> bool:
    model.log.append("allowed")
    return model.allow


def blocked(model: Model) -> bool:
    model.log.append("blocked")
    return model.block


def build(cls: type[Machine]) -> Machine:
    return cls(
        model=None,
        states=[
            {"name": "A", "on_exit": [logger("exit_A")]},
            {"name": "B", "on_enter": [logger("enter_B")], "on_exit": [logger("exit_B")]},
            {"name": "C", "on_enter": [logger("enter_C")], "final": True},
        ],
        initial="A",
        auto_transitions=False,
        prepare_event=[logger("prepare_event")],
        before_state_change=[logger("before_state_change")],
        after_state_change=[logger("after_state_change")],
        on_final=[logger("on_final")],
        transitions=[
            {
                "trigger": "go",
                "source": "A",
                "dest": "B",
                "prepare": [logger("prepare_AB")],
                "conditions": [allowed],
                "unless": [blocked],
                "before": [logger("before_AB")],
                "after": [logger("after_AB")],
            },
            {"trigger": "go", "source": "A", "dest": None, "after": [logger("internal_A")]},
            {"trigger": "go", "source": "B", "dest": "C", "before": [logger("before_BC")]},
        ],
    )


STOCK = build(Machine)
SHARED = build(_SharedMachine)


def run(machine: Machine, allow: bool, block: bool) -> tuple[list[bool], str, list[str]]:
    model = Model(allow, block)
    results = [bool(machine.events["go"].trigger(model, model)) for _ in range(2)]
    return results, model.state, model.log


@pytest.mark.parametrize(
    ("allow", "block"),
    [(True, False), (False, False), (True, True)],
    ids=["guard-passes", "guard-fails", "unless-blocks"],
)
def test_callbacks_fire_in_the_same_order_as_stock_transitions(allow: bool, block: bool) -> None:
    """Guards, unless, prepare, before/after, enter/exit, machine-wide and on_final callbacks."""
    assert run(STOCK, allow, block) == run(SHARED, allow, block)


def test_nothing_is_registered_on_the_shared_machine() -> None:
    """C1/TRANSITIONS-NOTES: stepping unregistered models adds nothing to machine.models."""
    run(SHARED, True, False)
    assert [] == SHARED.models
