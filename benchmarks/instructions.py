"""Instruction counts: the engine figures in CPU instructions per call, counted by callgrind.

Timings on a shared machine move by several per cent from run to run, and part of what they
measure is how well the CPU's caches and branch predictors suit the code (docs/performance.md).
An instruction count is neither: ``valgrind --tool=callgrind`` gives the same count for the same
interpreter, inputs and code on any load (the driven process runs with ``PYTHONHASHSEED=0``:
randomised string hashing moved counts by about 0.3 % from run to run), so an A/B of a change
reads off one run.

One process runs every workload under callgrind. Each workload's calls run inside one
``deque(map(use, items), maxlen=0)``, and callgrind counts only inside ``consume_iterator``
(the C function that drains it) and writes one dump per workload: the untimed parts (imports,
building the fresh inputs, warm-up calls, checks) are not counted. Inputs are fresh per call,
as in ``benchmarks/engine.py``. The per-item cost of the drain (a ``map`` step and a call) is
in every figure alike.

``python -m benchmarks --only instructions`` prints them; ``python -m benchmarks.instructions
--drive N`` is the process callgrind runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.engine import Mismatch
from benchmarks.report import Figure
from benchmarks.workloads import LIVE, SCENARIOS, fresh, live_session, ours, theirs, theirs_adapter
from preflight_fsm import ClarificationMachine

__all__ = ["instruction_figures"]

ROOT = Path(__file__).resolve().parent.parent
K = 1e-3
_DRAIN = "consume_iterator"  # CPython's C function behind deque(iterable, maxlen=0)


def _workloads() -> Iterator[tuple[str, Callable[[], Any], Callable[[Any], object]]]:
    """(name, make, use) in a fixed order: the order of callgrind's dumps."""
    adapter, heuristics = theirs_adapter()
    for scenario in SCENARIOS:
        yield f"session.{scenario.name}.ours", partial(fresh, scenario), ours
        yield (
            f"session.{scenario.name}.preflights",
            partial(fresh, scenario),
            partial(theirs, adapter, heuristics),
        )
    answers = LIVE.steps[1]
    text = live_session().snapshot().model_dump_json()
    yield "step", lambda: (live_session(), dict(answers)), lambda m: m[0].step(m[1])
    yield "snapshot.restore", lambda: text.encode().decode(), ClarificationMachine.from_snapshot
    yield (
        "snapshot.restore_step",
        lambda: (text.encode().decode(), dict(answers)),
        lambda t: ClarificationMachine.from_snapshot(t[0]).step(t[1]),
    )


def _check(name: str, result: object) -> None:
    state = getattr(result, "state", None)
    if name.endswith(".ours") and state != "Done":
        raise Mismatch(f"{name}: ended in {state}, not Done")
    if result is None:
        raise Mismatch(f"{name}: returned nothing")


def drive(count: int) -> None:
    """Run every workload ``count`` times, each drained once (the process callgrind counts)."""
    for name, make, use in _workloads():
        _check(name, use(make()))  # warm up and check, outside the drain: not counted
        items = [make() for _ in range(count)]
        gc.collect()
        gc.disable()
        deque(map(use, items), maxlen=0)
        gc.enable()
        print(name, flush=True)


def counts(count: int) -> dict[str, float]:
    """Instructions per call of each workload, from one callgrind run of :func:`drive`."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise Mismatch("valgrind is not installed: apt-get install valgrind (Debian, Ubuntu)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [
                valgrind,
                "--tool=callgrind",
                f"--toggle-collect={_DRAIN}",
                f"--dump-after={_DRAIN}",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-m",
                "benchmarks.instructions",
                "--drive",
                str(count),
            ],
            cwd=ROOT,
            # String hashing is randomised per process and moves a count by about 0.3 %: one
            # seed makes the same code give the same count, so an A/B reads off one run each.
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise Mismatch(f"the callgrind run failed:\n{done.stderr[-2000:]}")
        names = done.stdout.split()
        totals = [_total(out.with_name(f"{out.name}.{i}")) for i in range(1, len(names) + 1)]
    if not names or 0 in totals:
        raise Mismatch(
            f"callgrind counted nothing inside {_DRAIN}: this Python's library has no symbols"
        )
    return {name: total / count for name, total in zip(names, totals, strict=True)}


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise Mismatch(f"{dump.name}: no totals line")


def instruction_figures(count: int) -> list[Figure]:
    """The engine figures of ``benchmarks/engine.py`` in thousands of instructions per call."""
    per_call = counts(count)
    figures: list[Figure] = []
    for scenario in SCENARIOS:
        ours_k = per_call[f"session.{scenario.name}.ours"]
        theirs_k = per_call[f"session.{scenario.name}.preflights"]
        figures += [
            Figure(f"instructions.session.{scenario.name}.ours", ours_k * K, "k instr"),
            Figure(
                f"instructions.session.{scenario.name}.preflights",
                theirs_k * K,
                "k instr",
                note="Preflights' mock",
            ),
            Figure(
                f"instructions.session.{scenario.name}.ratio",
                ours_k / theirs_k,
                "x",
                note="ours / Preflights, in instructions (the target is on time)",
            ),
        ]
    step, restore, both = (
        per_call["step"],
        per_call["snapshot.restore"],
        per_call["snapshot.restore_step"],
    )
    figures += [
        Figure("instructions.step", step * K, "k instr"),
        Figure("instructions.snapshot.restore", restore * K, "k instr"),
        Figure("instructions.snapshot.restore_step", both * K, "k instr"),
        Figure(
            "instructions.snapshot.restore_step.ratio",
            both / step,
            "x",
            note="restore + step / step, in instructions (the target is on time)",
        ),
    ]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions")
    parser.add_argument("--drive", type=int, required=True, metavar="N", help="calls per figure")
    drive(parser.parse_args(argv).drive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
