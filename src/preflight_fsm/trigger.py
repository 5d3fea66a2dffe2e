"""transitions' trigger path for the shared machine, without its per-call overhead.

Plugged in through transitions' documented extension points (``Machine.event_cls``,
``Machine.transition_cls``). The same transitions, tried in the same order with the same guards
and callbacks; what goes is what a step paid for nothing: a ``functools.partial`` and a queue
check per trigger, an ``EventData`` per trigger (no callback can see one: ``send_event`` is
refused), a log call per callback list, and state lookups by name. The machine takes
only the features this path implements (guards, ``unless``, ``before``/``after``, enter/exit
callbacks); anything else is refused when it is built, so no branch here goes unused.
``tests/test_trigger.py`` runs the same definition on stock transitions and compares.
"""

from __future__ import annotations

from typing import Any

from transitions import Machine
from transitions.core import Event, MachineError, Transition

__all__ = ["SharedMachine"]

# Machine options this path does not implement: a machine that sets one is refused.
# (ignore_invalid_triggers: an answer in a state with no answer row raises MachineError here, as
# stock transitions does without the option; with it, stock would return False instead.)
_REFUSED_OPTIONS = (
    "ignore_invalid_triggers",
    "queued",
    "send_event",
    "prepare_event",
    "before_state_change",
    "after_state_change",
    "finalize_event",
    "on_exception",
    "on_final",
    "model_override",
)


class _Transition(Transition):
    """A transition taken by :meth:`_Event.trigger`: guards called directly, callbacks without
    log lines."""

    def take(
        self, machine: Machine, model: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> bool:
        """Transition.execute for this path: False if a guard refuses, else the state changed.

        SharedMachine refused callbacks given by name and internal transitions at build time:
        every callback is a callable (the stubs type them as names or callables, hence the Any)
        and ``dest`` is a state.
        """
        condition: Any
        func: Any
        for condition in self.conditions:
            if condition.func(*args, **kwargs) != condition.target:
                return False
        for func in self.before:
            func(*args, **kwargs)
        states = machine.states
        for func in states[self.source].on_exit:
            func(*args, **kwargs)
        dest = states[str(self.dest)]  # never None: internal transitions are refused
        setattr(model, machine.model_attribute, dest.name)
        for func in dest.on_enter:
            func(*args, **kwargs)
        for func in self.after:
            func(*args, **kwargs)
        return True


class _Event(Event):
    """Event.trigger straight to the transitions of the model's state (nothing is queued, and no
    callback sees an EventData: ``send_event`` is refused)."""

    transitions: dict[str, list[_Transition]]  # type: ignore[assignment]  # built by transition_cls

    def trigger(self, model: object, *args: Any, **kwargs: Any) -> bool:
        machine = self.machine
        name = getattr(model, machine.model_attribute)
        transitions = self.transitions.get(name)
        if transitions is None:
            raise MachineError(f"Can't trigger event {self.name} from state {name}!")
        for transition in transitions:  # noqa: SIM110 -- any() would add a generator per trigger
            if transition.take(machine, model, args, kwargs):
                return True
        return False


class SharedMachine(Machine):
    """A transitions Machine that steps unregistered models through the trigger path above.

    Guards and callbacks must be callables (not names); they are called with the trigger's
    arguments, as transitions calls them without ``send_event``.
    """

    event_cls = _Event
    transition_cls = _Transition

    def __init__(self, **kwargs: Any) -> None:
        refused = [name for name in _REFUSED_OPTIONS if kwargs.get(name)]
        if refused:
            raise ValueError("SharedMachine does not implement: " + ", ".join(refused))
        super().__init__(**kwargs)

    def add_states(self, states: Any, *args: Any, **kwargs: Any) -> None:
        """Machine.add_states, refusing enter/exit callbacks given by name."""
        super().add_states(states, *args, **kwargs)
        for state in self.states.values():
            if any(isinstance(f, str) for f in (*state.on_enter, *state.on_exit)):
                raise ValueError(f"SharedMachine takes {state.name}'s callbacks as callables")

    def add_transition(
        self,
        trigger: str,
        source: Any,
        dest: Any = None,
        conditions: Any = None,
        unless: Any = None,
        before: Any = None,
        after: Any = None,
        prepare: Any = None,
        **kwargs: Any,
    ) -> None:
        """Machine.add_transition, refusing what the trigger path above does not implement."""
        if prepare or dest is None or dest == "=":
            raise ValueError("SharedMachine takes no prepare callbacks or internal transitions")
        callables = [*_listed(conditions), *_listed(unless), *_listed(before), *_listed(after)]
        if any(isinstance(func, str) for func in callables):
            raise ValueError("SharedMachine takes guards and callbacks as callables, not names")
        super().add_transition(
            trigger, source, dest, conditions, unless, before, after, prepare, **kwargs
        )


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
