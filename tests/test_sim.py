"""tests/sim.py, the seeded fault simulator of the session layer, at a size CI affords.

``make sim SEEDS=N`` runs the same simulation for longer (docs/sessions.md).
"""

from __future__ import annotations

import pytest

from preflight_fsm.store import MemoryStore, StoreUnavailable
from preflight_fsm.store.base import StoredSession
from preflight_fsm.store.faults import FaultRates, FaultyStore, SimClock
from redis_server import redis_missing
from sim import Simulation, backend_factory, simulate

SEEDS = range(8)
SESSIONS = 25


@pytest.mark.parametrize("backend", ["memory", "sqlite", "redis"])
def test_seeded_runs_lose_fork_and_resurrect_nothing(backend: str) -> None:
    """Under busy and disk errors, lost replies, expiry between read and write, duplicated and
    lost rounds and concurrent writers, no acknowledged step is lost or forked, no session comes
    back, and every error a client saw is documented; the faults did happen."""
    if backend == "redis" and redis_missing() is not None:
        pytest.skip(str(redis_missing()))
    reports = simulate(SEEDS if backend != "redis" else range(3), (backend,), SESSIONS)[backend]
    assert [] == [failure for report in reports for failure in report.failures]
    assert all(report.faults for report in reports)
    assert sum(report.acknowledged for report in reports) > 0


def test_a_seed_reproduces_its_run_exactly() -> None:
    """The same seed makes the same sessions, faults and outcomes, event for event."""
    with backend_factory("sqlite") as make_store:
        first, again = (Simulation(3, "sqlite", make_store, SESSIONS).run() for _ in range(2))
    assert (first.digest, first.faults) == (again.digest, again.faults)
    assert first.events == again.events


class _AcknowledgesLostWrites(MemoryStore):
    """A store with a planted bug: every fifth write is acknowledged but not stored."""

    writes = 0

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        self.writes += 1
        if self.writes % 5:
            return super().put(session_id, snapshot, expected_version, flow=flow)
        stored = self.get(session_id)
        return StoredSession(
            session_id, expected_version + 1, snapshot, stored.created_at, self.clock(),
            stored.expire_after, stored.flow,
        )  # fmt: skip


def test_a_planted_lost_write_is_found_and_its_seed_reproduces_it() -> None:
    """The model is no rubber stamp: a store acknowledging writes it never stored fails the run,
    and the failing seed fails again with the very same failures."""
    runs = [
        Simulation(5, "planted", lambda clock: _AcknowledgesLostWrites(clock=clock), SESSIONS).run()
        for _ in range(2)
    ]
    assert runs[0].failures
    assert runs[0].failures == runs[1].failures


def test_the_fault_store_injects_what_it_logs() -> None:
    """FaultyStore: a rate of 1 fails every call, before it reaches the store, and logs it."""
    clock = SimClock()
    store = FaultyStore(MemoryStore(clock=clock), clock, seed=1, rates=FaultRates(busy=1.0))
    with pytest.raises(StoreUnavailable, match="database is locked"):
        store.create("s1", "x")
    assert ["busy create s1"] == store.log
    assert [] == store.inner.list()


def test_llm_mode_seeds_lose_nothing_under_a_dripping_stalling_or_failing_provider() -> None:
    """Preflights' rounds through the guard on a real provider adapter (tests/sim_llm.py): a
    provider dripping bytes past the deadline, stalling or failing, with the store's faults, loses
    no acknowledged round, leaves no connection open, and each fault was injected."""
    pytest.importorskip("preflights")
    pytest.importorskip("openai")
    from sim_llm import simulate as simulate_llm

    runs = simulate_llm(range(2), ("memory", "sqlite"), 4)
    reports = [report for backend in runs.values() for report in backend]
    assert [] == [failure for report in reports for failure in report.failures]
    injected = {fault.split()[0] for report in reports for fault in report.faults}
    assert {"drip", "stall", "error", "lock_holder"} <= injected
    assert sum(report.acknowledged for report in reports) > 0
