"""N threads stepping different sessions through the one shared machine of the flow."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from benchmarks.report import Figure
from benchmarks.workloads import SCENARIOS
from preflight_fsm import ClarificationMachine

__all__ = ["thread_figures"]


def _fresh(count: int) -> list[tuple[int, ClarificationMachine]]:
    """``count`` sessions at turn 1, cycling through the scenarios."""
    return [
        (i % len(SCENARIOS), ClarificationMachine(SCENARIOS[i % len(SCENARIOS)].intention))
        for i in range(count)
    ]


def _run(sessions: list[tuple[int, ClarificationMachine]]) -> list[dict[str, Any]]:
    """Step each session to its end; every turn it shows, and its snapshot, as plain data."""
    out = []
    for kind, machine in sessions:
        turns = [machine.step(answers).model_dump() for answers in SCENARIOS[kind].steps]
        out.append({"turns": turns, "snapshot": machine.snapshot().model_dump()})
    return out


def _threaded(
    sessions: list[tuple[int, ClarificationMachine]], threads: int
) -> tuple[list[Any], float]:
    shares = [sessions[i::threads] for i in range(threads)]
    results: list[list[dict[str, Any]]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads + 1)

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = _run(shares[i])
        except BaseException as exc:  # reported below: a thread must not fail silently
            errors.append(exc)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    merged: list[Any] = [None] * len(sessions)
    for i, share in enumerate(results):
        merged[i::threads] = share
    return merged, elapsed


def thread_figures(threads: int, count: int, switch_interval: float | None = None) -> list[Figure]:
    steps = sum(len(SCENARIOS[i % len(SCENARIOS)].steps) for i in range(count))
    expected = _run(_fresh(count))
    old = sys.getswitchinterval()
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)  # the smoke run forces threads to interleave often
    try:
        got, elapsed = _threaded(_fresh(count), threads)
    finally:
        sys.setswitchinterval(old)
    same = got == expected
    # The sequential time above includes building the sessions; time the steps alone for both.
    fresh = _fresh(count)
    start = time.perf_counter()
    _run(fresh)
    sequential = time.perf_counter() - start
    return [
        Figure(
            "threads.identical",
            float(same),
            "bool",
            target="= sequential results",
            ok=same,
            note=f"{threads} threads, {count:,} sessions, every turn and snapshot compared",
        ),
        Figure(
            "threads.steps_per_s",
            steps / elapsed,
            "steps/s",
            target=f"{threads} threads, shared machine",
            note=f"one thread: {steps / sequential:,.0f} steps/s (the GIL runs one at a time)",
        ),
    ]
