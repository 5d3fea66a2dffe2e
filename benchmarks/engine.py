"""Engine figures: whole sessions against Preflights' mock, one step, snapshots and restores."""

from __future__ import annotations

from functools import partial

from benchmarks.report import Figure
from benchmarks.timing import batched, paired
from benchmarks.workloads import (
    LIVE,
    SCENARIOS,
    fresh,
    live_session,
    ours,
    theirs,
    theirs_adapter,
)
from preflight_fsm import ClarificationMachine

__all__ = ["engine_figures"]

US = 1e6
SESSION_TARGETS = {"shortcut": 2.7, "two_phase": 2.7, "other": 2.9}
"""Ours over Preflights' mock per whole session, in time: no regression (issue 25)."""
RESTORE_TARGET = 3.0
"""Restore + step over a step, measured interleaved."""


class Mismatch(AssertionError):
    """A benchmark measured something other than the behaviour it claims to measure."""


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise Mismatch(what)


def session_figures(inner: int, rounds: int) -> list[Figure]:
    """Full sessions, ours against Preflights' mock on the same intentions, side by side."""
    adapter, heuristics = theirs_adapter()
    figures: list[Figure] = []
    for scenario in SCENARIOS:
        turn = ours(scenario)
        _check(turn.state == "Done" and turn.patch == scenario.patch, f"{scenario.name}: {turn}")
        _check(theirs(adapter, heuristics, scenario) is not None, f"{scenario.name}: no patch")
        times = paired(
            (partial(fresh, scenario), ours),
            (partial(fresh, scenario), partial(theirs, adapter, heuristics)),
            inner=inner,
            rounds=rounds,
        )
        ratio = times.ratio
        target = SESSION_TARGETS[scenario.name]
        turns = len(scenario.steps)
        figures += [
            Figure(
                f"session.{scenario.name}.ours",
                times.numerator * US,
                "µs",
                note=f"construct + {turns} step{'s' * (turns > 1)} to Done",
            ),
            Figure(
                f"session.{scenario.name}.preflights",
                times.denominator * US,
                "µs",
                note="peer: MockLLMAdapter generate_questions + extract_decision_patch",
            ),
            Figure(
                f"session.{scenario.name}.ratio",
                ratio,
                "x",
                target=f"≤ {target:.2f} (ours / Preflights)",
                ok=ratio <= target,
            ),
        ]
    return figures


def step_figures(inner: int, rounds: int) -> list[Figure]:
    """One step on a live session; its snapshot to JSON and back; restore + the same step."""
    answers = LIVE.steps[1]
    expected = live_session().step(answers)
    _check(expected.patch == LIVE.patch, f"step: {expected}")

    text = live_session().snapshot().model_dump_json()
    restored = ClarificationMachine.from_snapshot(text)
    _check(restored.snapshot().model_dump_json() == text, "snapshot: the round trip changed it")
    _check(restored.step(answers) == expected, "restore + step: another turn than a live step")

    # The step and restore + step alternate round by round: timed in separate batches, each
    # runs with the caches and branch predictors warm for itself alone, which a service that
    # restores and steps never sees (docs/performance.md).
    paired_times = paired(
        (
            lambda: (text.encode().decode(), dict(answers)),
            lambda t: ClarificationMachine.from_snapshot(t[0]).step(t[1]),
        ),
        (lambda: (live_session(), dict(answers)), lambda m: m[0].step(m[1])),
        inner=inner,
        rounds=rounds,
    )
    step, restore_step = paired_times.denominator, paired_times.numerator
    held = live_session()
    dump = batched(
        lambda: held, lambda m: m.snapshot().model_dump_json(), inner=inner, rounds=rounds
    )
    restore = batched(
        lambda: text.encode().decode(),
        ClarificationMachine.from_snapshot,
        inner=inner,
        rounds=rounds,
    )
    ratio = paired_times.ratio
    return [
        Figure("step", step * US, "µs", note="a live two-phase session: its field answer, to Done"),
        Figure("snapshot.to_json", dump * US, "µs", note=f"{len(text)} bytes of JSON"),
        Figure("snapshot.restore", restore * US, "µs", note="JSON to a restored machine, checked"),
        Figure(
            "snapshot.restore_step", restore_step * US, "µs", note="restore, then the same step"
        ),
        Figure(
            "snapshot.restore_step.ratio",
            ratio,
            "x",
            target=f"≤ {RESTORE_TARGET:.2f} (restore + step / step, interleaved)",
            ok=ratio <= RESTORE_TARGET,
        ),
    ]


def engine_figures(inner: int, rounds: int) -> list[Figure]:
    return session_figures(inner, rounds) + step_figures(inner, rounds)
