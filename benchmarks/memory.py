"""Memory figures, each measured in a fresh interpreter so nothing else shares its heap.

``python -m benchmarks.memory live N`` prints the traced bytes per live session;
``python -m benchmarks.memory rss N`` prints the RSS growth over N sessions run to the end.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

from benchmarks.report import Figure

__all__ = ["memory_figures"]

ROOT = Path(__file__).resolve().parent.parent
KB = 1024
MB = 1024 * 1024


def live_bytes(count: int) -> dict[str, float]:
    """Traced bytes per session held after its first answered turn.

    The intentions are made before tracing starts: they are the caller's text, not the engine's.
    The list holding the sessions is not counted either.
    """
    from benchmarks.workloads import LIVE
    from preflight_fsm import ClarificationMachine

    intentions = [f"{LIVE.intention} #{i}" for i in range(count)]
    first = LIVE.steps[0]
    ClarificationMachine(LIVE.intention).step(first)  # the engine is built outside the count
    held: list[ClarificationMachine] = []
    held_size = sys.getsizeof([None] * count)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for intention in intentions:
        machine = ClarificationMachine(intention)
        machine.step(first)
        held.append(machine)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    states = {m.state for m in held}
    if states != {"NeedPrimaryField"} or len(held) != count:
        raise AssertionError(f"live sessions are not where the figure says: {states}")
    return {"bytes_per_session": (after - before - held_size) / count, "sessions": count}


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * KB
    raise OSError("no VmRSS in /proc/self/status")


def rss_growth(count: int) -> dict[str, float]:
    """RSS growth over ``count`` sessions created and run to Done, after a warm-up of 10,000."""
    from benchmarks.workloads import SCENARIOS, ours

    warm = 10_000
    for i in range(warm):
        ours(SCENARIOS[i % len(SCENARIOS)])
    gc.collect()
    start = _rss()
    done = 0
    for i in range(count):
        scenario = SCENARIOS[i % len(SCENARIOS)]
        if ours(scenario).patch == scenario.patch:
            done += 1
    gc.collect()
    end = _rss()
    if done != count:
        raise AssertionError(f"only {done} of {count} sessions ended with their patch")
    return {"growth_bytes": end - start, "start_bytes": start, "sessions": count}


def _child(kind: str, count: int) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", kind, str(count)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise RuntimeError(f"benchmarks.memory {kind} failed:\n{result.stderr}")
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def memory_figures(live: int, sessions: int) -> list[Figure]:
    per = _child("live", live)["bytes_per_session"]
    rss = _child("rss", sessions)
    growth = rss["growth_bytes"] / MB
    # The 10 MB target is for 1,000,000 sessions; a smaller run is held to its share.
    allowed = 10 * sessions / 1_000_000
    return [
        Figure(
            "memory.live_session",
            per,
            "B",
            target="≤ 1,024 B per session",
            ok=per <= KB,
            note=f"tracemalloc, {live:,} sessions held after turn 1",
        ),
        Figure(
            "memory.rss_growth",
            growth,
            "MB",
            target=f"≤ {allowed:.3g} MB over {sessions:,} sessions",
            ok=growth <= allowed,
            note=f"RSS after - before, from {rss['start_bytes'] / MB:.0f} MB",
        ),
    ]


if __name__ == "__main__":
    kind, number = sys.argv[1], int(sys.argv[2])
    measure = {"live": live_bytes, "rss": rss_growth}[kind]
    print(json.dumps(measure(number)))
