"""trigger.py's SharedMachine keeps transitions' own semantics (C1).

It plugs Event/Transition subclasses into transitions through its extension points to drop
per-call overhead. Here both run the same definition: every callback it takes must fire in the
same order, with the same results, as on a stock ``transitions.Machine``; what it does not
implement is refused when the machine is built.
"""

from __future__ import annotations

from typing import Any

import pytest
from transitions import Machine
from transitions.core import MachineError

from preflight_fsm.trigger import SharedMachine


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
        transitions=[
            {
                "trigger": "go",
                "source": "A",
                "dest": "B",
                "conditions": [allowed],
                "unless": [blocked],
                "before": [logger("before_AB")],
                "after": [logger("after_AB")],
            },
            {"trigger": "go", "source": "A", "dest": "C", "after": [logger("after_AC")]},
            {"trigger": "go", "source": "C", "dest": "A", "before": [logger("before_CA")]},
            {"trigger": "go", "source": "B", "dest": "C", "before": [logger("before_BC")]},
        ],
    )


STOCK = build(Machine)
SHARED = build(SharedMachine)


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
    """Guards, unless, before/after and enter/exit callbacks, rows tried in order."""
    assert run(STOCK, allow, block) == run(SHARED, allow, block)


def test_nothing_is_registered_on_the_shared_machine() -> None:
    """C1/TRANSITIONS-NOTES: stepping unregistered models adds nothing to machine.models."""
    run(SHARED, True, False)
    assert [] == SHARED.models


@pytest.mark.parametrize(
    "option",
    [
        "queued",
        "send_event",
        "prepare_event",
        "finalize_event",
        "on_exception",
        "on_final",
        "ignore_invalid_triggers",
    ],
)
def test_options_the_trigger_path_does_not_implement_are_refused(option: str) -> None:
    """A machine that asks for what SharedMachine would silently skip is not built."""
    with pytest.raises(ValueError, match=option):
        SharedMachine(model=None, states=["A"], initial="A", **{option: True})


@pytest.mark.parametrize(
    "transition",
    [
        {"trigger": "go", "source": "A", "dest": "A", "conditions": "allowed"},
        {"trigger": "go", "source": "A", "dest": None},
        {"trigger": "go", "source": "A", "dest": "A", "prepare": [allowed]},
    ],
    ids=["guard-by-name", "internal", "prepare"],
)
def test_transitions_the_trigger_path_does_not_implement_are_refused(
    transition: dict[str, Any],
) -> None:
    """Named callbacks, internal transitions and prepare callbacks are refused at build."""
    with pytest.raises(ValueError, match="SharedMachine"):
        SharedMachine(model=None, states=["A"], initial="A", transitions=[transition])


def test_a_trigger_from_a_state_without_its_rows_raises_as_stock_transitions_does() -> None:
    """Without ignore_invalid_triggers (refused above), both raise MachineError with one text."""

    def stop(machine: Machine) -> str:
        model = Model(True, False)
        model.state = "D"
        with pytest.raises(MachineError) as raised:
            machine.events["go"].trigger(model, model)
        return str(raised.value)

    stock = Machine(model=None, states=["A", "D"], initial="A", auto_transitions=False)
    stock.add_transition("go", "A", "D")
    shared = SharedMachine(model=None, states=["A", "D"], initial="A", auto_transitions=False)
    shared.add_transition("go", "A", "D")
    assert stop(stock) == stop(shared)
