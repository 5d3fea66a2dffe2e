"""Medians over many rounds, with the contenders interleaved round by round, on thread CPU time.

On a shared 2-core machine a burst of load from another process slows whatever runs at that
moment; interleaving puts ours and theirs under the same bursts, and the median drops the rounds a
burst hit. Rounds are timed on this thread's CPU clock (``time.thread_time_ns``), which does not
count the time another process held the core; what is left of the load (caches and branch
predictors shared with it) the interleaving and the median take care of. The garbage collector is
paused inside a round, as ``timeit`` does.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, TypeVar

__all__ = [
    "Paired",
    "batched",
    "child_pid",
    "median_per_call",
    "paired",
    "process_cpu",
]

T = TypeVar("T")
U = TypeVar("U")


def _round(fn: Callable[[], object], inner: int) -> float:
    """Seconds per call of ``fn`` over one round of ``inner`` calls."""
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time_ns()
        for _ in range(inner):
            fn()
        elapsed = time.thread_time_ns() - start
    finally:
        gc.enable()
    return elapsed / inner / 1e9


def median_per_call(fn: Callable[[], object], *, inner: int, rounds: int) -> float:
    """Median over ``rounds`` of the seconds one call of ``fn`` takes."""
    fn()  # warm up: engines are built and caches filled outside the measurement
    return statistics.median(_round(fn, inner) for _ in range(rounds))


class Paired(NamedTuple):
    """Two contenders timed in neighbouring rounds: seconds per call of each, and their ratio."""

    numerator: float
    denominator: float
    ratio: float
    """The median of the rounds' ratios, numerator over denominator."""


def paired(
    numerator: tuple[Callable[[], T], Callable[[T], object]],
    denominator: tuple[Callable[[], U], Callable[[U], object]],
    *,
    inner: int,
    rounds: int,
) -> Paired:
    """``numerator`` against ``denominator`` (each ``(make, use)``), for a ratio figure (D312).

    A round times ``inner`` fresh items of the numerator, and as many of the denominator as take
    about as long (``inner`` times the two's ratio per call, measured before the rounds), who goes
    first alternating. Equal durations put the two under the same share of the machine's
    interruptions (each leaves the caches cold for a while: a round that is short for the cheaper
    contender would be hit less often, and its median would flatter it); the figure is the median
    of the rounds' ratios, each of two neighbouring rounds, so a swing of the machine's speed
    cancels.
    """
    numerator[1](numerator[0]())  # warm up: engines are built and caches filled outside the rounds
    denominator[1](denominator[0]())
    probe = max(1, inner // 4)
    scale = statistics.median(
        _timed(*numerator, probe) / _timed(*denominator, probe) for _ in range(5)
    )
    denominator_inner = max(1, round(inner * scale))
    samples: list[tuple[float, float]] = []
    for i in range(rounds):
        if i % 2:
            b = _timed(*denominator, denominator_inner)
            a = _timed(*numerator, inner)
        else:
            a = _timed(*numerator, inner)
            b = _timed(*denominator, denominator_inner)
        samples.append((a, b))
    return Paired(
        statistics.median(a for a, _ in samples),
        statistics.median(b for _, b in samples),
        statistics.median(a / b for a, b in samples),
    )


def _timed(make: Callable[[], T], use: Callable[[T], object], inner: int) -> float:
    """Seconds per ``use(item)`` over ``inner`` fresh items made before the clock starts."""
    items = [make() for _ in range(inner)]
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time_ns()
        for item in items:
            use(item)
        elapsed = time.thread_time_ns() - start
    finally:
        gc.enable()
    return elapsed / inner / 1e9


def batched(make: Callable[[], T], use: Callable[[T], object], *, inner: int, rounds: int) -> float:
    """Median seconds per ``use(item)``, each round on ``inner`` fresh items made untimed."""
    samples = [_timed(make, use, inner) for _ in range(rounds + 1)]
    return statistics.median(samples[1:])  # the first round warms up


def process_cpu(pid: int) -> float:
    """Seconds of CPU process ``pid`` has run, all its threads, from the scheduler's own count
    (``/proc/<pid>/task/*/schedstat``, in nanoseconds: finer than the 10 ms of ``stat``)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended while being read
    return total / 1e9


def main_thread_cpu(pid: int) -> float:
    """Seconds of CPU the main thread of process ``pid`` has run (a server's event loop), from
    the same count as :func:`process_cpu`; the rest of the process's is its other threads'."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line holds ``marker``."""
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if marker.encode() in command:
                return int(pid)
    raise LookupError(f"no child process runs {marker!r}")
