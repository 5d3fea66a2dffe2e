"""``python -m benchmarks.shortcuts``: what each cache or shortcut on the hot path buys, A/B.

Every shortcut the engine keeps must pay at least 10 % of a ``make bench`` figure
(docs/performance.md). Each is switched off by replacing the one function it sits behind with
the plain path, and timed against itself switched on, round by round in alternating order in one
process, with fresh inputs per call as in ``benchmarks/engine.py``; medians of the rounds.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from benchmarks.timing import _timed
from benchmarks.workloads import LIVE, SCENARIOS, fresh, live_session, ours
from preflight_fsm import ClarificationMachine
from preflight_fsm import machine as machine_module
from preflight_fsm import turn as turn_module
from preflight_fsm.snapshot import fast as snapshot_fast
from preflight_fsm.snapshot import json_form as snapshot_json_form
from preflight_fsm.turn import Turn
from preflight_fsm.turn_data import turn_fields

US = 1e6


def _stdlib_canonical(content: Any) -> bytes:
    """The canonical JSON as the standard library writes it (the definition D21 names), of the
    signed fields only, as ``snapshot.json_form.canonical`` writes them (D48)."""
    plain = {name: content[name] for name in snapshot_json_form.SIGNED_FIELDS}
    plain["steps"] = list(content["steps"])
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _stdlib_signed_json(*values: Any) -> bytes:
    """``snapshot.json_form.signed_json`` (the signed fields by position) by the standard
    library, sorting every key."""
    return _stdlib_canonical(dict(zip(snapshot_json_form.SIGNED_FIELDS, values, strict=True)))


@contextmanager
def _replaced(module: Any, name: str, plain: Any, *more: Any) -> Iterator[None]:
    """``name`` replaced by ``plain`` in ``module`` and in each of ``more`` (modules that
    imported it by name)."""
    modules = (module, *more)
    kept = [getattr(m, name) for m in modules]
    for m in modules:
        setattr(m, name, plain)
    try:
        yield
    finally:
        for m, k in zip(modules, kept, strict=True):
            setattr(m, name, k)


_SESSIONS = ("session.shortcut", "session.two_phase", "session.other")
_RESTORE = ("snapshot.restore", "snapshot.restore_step")

# Each shortcut, how to switch it off, and the figures it can change.
SHORTCUTS: dict[str, tuple[Callable[[], Any], tuple[str, ...]]] = {
    # D46: turns without a patch shared by the value of every field (a live session holds one).
    "turn cache (turn_of)": (
        lambda: _replaced(machine_module, "_turn_of", _unshared_turn),
        (*_SESSIONS, "step", "memory.live_session"),
    ),
    # Full snapshots in JSON text restored from the parsed JSON, without a SessionSnapshot.
    "restore from parsed JSON (restored_json)": (
        lambda: _replaced(snapshot_fast, "restored_json", lambda *args: None),
        _RESTORE,
    ),
    # The digest's canonical JSON written by pydantic-core instead of json.dumps (``canonical``
    # reads a mapping and calls ``signed_json``; the fast restore calls it by position).
    "canonical JSON by pydantic-core (signed_json)": (
        lambda: _replaced(snapshot_json_form, "signed_json", _stdlib_signed_json, snapshot_fast),
        ("snapshot.to_json", *_RESTORE),
    ),
}


def _unshared_turn(s: Any) -> Turn:
    """A turn built afresh every time, as turn_of builds the turns it does not share."""
    return turn_module._validated(turn_fields(s))


def _live_bytes(count: int = 20_000) -> float:
    """Traced bytes per live session after its first answered turn (as benchmarks/memory.py)."""
    sessions = [fresh(LIVE) for _ in range(count)]
    held: list[ClarificationMachine] = []
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for scenario in sessions:
        machine = ClarificationMachine(scenario.intention)
        machine.step(scenario.steps[0])
        held.append(machine)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


_Workload = tuple[Callable[[], Any], Callable[[Any], object]]


def _workloads() -> dict[str, _Workload]:
    answers = LIVE.steps[1]
    text = live_session().snapshot().model_dump_json()
    loads: dict[str, _Workload] = {
        f"session.{scenario.name}": (partial(fresh, scenario), ours) for scenario in SCENARIOS
    }
    loads["step"] = (lambda: (live_session(), dict(answers)), lambda m: m[0].step(m[1]))
    loads["snapshot.to_json"] = (live_session, lambda m: m.snapshot().model_dump_json())
    loads["snapshot.restore"] = (
        lambda: text.encode().decode(),
        ClarificationMachine.from_snapshot,
    )
    loads["snapshot.restore_step"] = (
        lambda: (text.encode().decode(), dict(answers)),
        lambda t: ClarificationMachine.from_snapshot(t[0]).step(t[1]),
    )
    return loads


def measure(
    inner: int, rounds: int, only: str = "", live: int = 20_000
) -> dict[str, dict[str, tuple[float, float]]]:
    """For each shortcut (whose name holds ``only``) and figure: (median µs with it, without);
    for ``memory.live_session``, bytes per live session of ``live`` sessions held."""
    loads = _workloads()
    results: dict[str, dict[str, tuple[float, float]]] = {}
    for shortcut, (switched_off, figures) in SHORTCUTS.items():
        if only not in shortcut:
            continue
        results[shortcut] = {}
        for figure in figures:
            if figure == "memory.live_session":  # bytes, not µs: deterministic, measured once
                with switched_off():
                    without = _live_bytes(live)
                results[shortcut][figure] = (_live_bytes(live), without)
                continue
            make, use = loads[figure]
            on: list[float] = []
            off: list[float] = []
            for i in range(rounds + 1):
                for with_it in (True, False) if i % 2 else (False, True):
                    if with_it:
                        on.append(_timed(make, use, inner))
                    else:
                        with switched_off():
                            off.append(_timed(make, use, inner))
            # The first round of each warms up.
            results[shortcut][figure] = (
                statistics.median(on[1:]) * US,
                statistics.median(off[1:]) * US,
            )
    return results


def main() -> None:
    """Print, per shortcut, each figure with and without it and the share of time it saves."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inner", type=int, default=200, help="calls per round")
    parser.add_argument("--rounds", type=int, default=31, help="rounds (the median is shown)")
    parser.add_argument("--only", default="", help="only the shortcuts whose name holds this")
    args = parser.parse_args()
    for shortcut, figures in measure(args.inner, args.rounds, args.only).items():
        print(shortcut)
        for figure, (on, off) in figures.items():
            saved = (off - on) / off
            unit = "B " if figure.startswith("memory") else "µs"
            with_it, without = f"{on:7.2f} {unit} with", f"{off:7.2f} {unit} without"
            print(f"  {figure:24} {with_it}, {without}: saves {saved:6.1%}")


if __name__ == "__main__":
    main()
