"""The fault injector: seeded, so the same seed gives the same faults, call for call."""

from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("preflights")

from preflights.core.types import default_v1_heuristics

from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.llm.faults import FAULTS, FaultyLLMAdapter

RATES = {fault: 0.1 for fault in FAULTS}


class NoWait:
    """A clock on which a slow reply takes no time."""

    def monotonic(self) -> float:
        return 0.0

    def sleep(self, seconds: float) -> None:
        pass


def sequence(seed: int, calls: int = 60) -> list[str | None]:
    faulty = FaultyLLMAdapter(FsmLLMAdapter(), RATES, seed=seed, clock=NoWait())
    for _ in range(calls):
        with contextlib.suppress(Exception):  # the injected errors are the point
            faulty.generate_questions("Add OAuth login", default_v1_heuristics())
    return faulty.injected


def test_the_same_seed_gives_the_same_sequence_of_faults() -> None:
    """Two injectors on one seed inject the same fault at the same call."""
    assert sequence(11) == sequence(11)


def test_another_seed_gives_another_sequence() -> None:
    """The seed matters."""
    assert sequence(11) != sequence(12)


def test_each_fault_is_drawn_at_its_rate() -> None:
    """Over many calls every fault appears, and calls without one are the rest (30%)."""
    drawn = sequence(5, calls=400)
    assert set(FAULTS) <= set(drawn)
    assert 0.2 < drawn.count(None) / len(drawn) < 0.4


@pytest.mark.parametrize(
    ("rates", "message"),
    [({"meteor": 0.1}, "unknown fault"), ({"timeout": 0.7, "slow": 0.6}, "at most 1")],
)
def test_unknown_faults_and_rates_over_one_are_refused(
    rates: dict[str, float], message: str
) -> None:
    """The error names the faults there are, or the bound."""
    with pytest.raises(ValueError, match=message):
        FaultyLLMAdapter(FsmLLMAdapter(), rates)
