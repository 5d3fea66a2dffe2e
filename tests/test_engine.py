"""engine.py: one transitions machine per flow, shared by every session; the step loop."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from preflight_fsm import ClarificationMachine, InvalidAnswers
from preflight_fsm.engine import engine_for
from preflight_fsm.flow import default_flow, flow_from_data


@pytest.fixture
def switch_often() -> Iterator[None]:
    """Threads switch every microsecond instead of every 5 ms, so that races happen."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_one_engine_serves_every_session_of_a_flow() -> None:
    """The machine is built once per flow (by fingerprint), not per session."""
    assert engine_for(default_flow()) is engine_for(flow_from_data({}))


def test_sessions_are_never_registered_on_the_shared_machine() -> None:
    """TRANSITIONS-NOTES: stepping unregistered sessions adds nothing to machine.models."""
    machine = engine_for(default_flow()).machine
    for _ in range(50):
        ClarificationMachine("Improve the feedback form").step({"change_category": "Database"})
    assert [] == machine.models


def test_a_step_passes_through_states_whose_question_is_answered() -> None:
    """C3: `answer` fires again while the new state's question is already answered."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Database", "db_type": "MySQL"})
    assert [("NeedCategory", "NeedPrimaryField"), ("NeedPrimaryField", "Done")] == [
        (t.source, t.dest) for t in machine.trace
    ]


def test_the_start_event_fires_once_at_the_start() -> None:
    """C4: the shortcut is the `start` event, recorded at step 0."""
    machine = ClarificationMachine("Add OAuth login")
    assert [(0, "start")] == [(t.turn, t.trigger) for t in machine.trace]


def test_threads_stepping_one_machine_never_lose_an_answer(switch_often: None) -> None:
    """Steps on one machine are serialised: each sees the other's answer or is refused.

    Threads switch every microsecond (``switch_often``), so without the machine's lock two
    steps interleave and both apply: one answer lost, the snapshot forked.
    """
    for _ in range(200):
        machine = ClarificationMachine("Improve the feedback form")
        results: list[str] = []
        barrier = threading.Barrier(2)
        threads = [
            threading.Thread(target=race, args=(machine, barrier, value, results))
            for value in ("Database", "Frontend")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # One step applied; the other met the new position and was refused, not lost.
        assert ["InvalidAnswers", "ok"] == sorted(results)
        assert 1 == len(machine.snapshot().steps)


def race(
    machine: ClarificationMachine, barrier: threading.Barrier, value: str, results: list[str]
) -> None:
    barrier.wait()
    try:
        machine.step({"change_category": value})
        results.append("ok")
    except InvalidAnswers:
        results.append("InvalidAnswers")
