"""Answered steps per second through the durable session stores (SQLite, Redis, PostgreSQL),
one process and several.

Each worker starts its sessions (untimed), waits for a common start time, then answers every
turn of every session through ``Sessions.answer`` (load, restore, step, compare-and-set write).
``python -m benchmarks.stores worker LOCATION COUNT START_AT`` is one such worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.postgres_server import postgres_missing, throwaway_postgres
from tests.redis_server import redis_missing, throwaway_redis

from benchmarks.report import Figure

__all__ = ["store_figures"]

ROOT = Path(__file__).resolve().parent.parent


def _missing() -> str | None:
    """Why the store benchmarks cannot run here, or None."""
    try:
        from preflight_fsm.store import Sessions, open_store  # noqa: F401
    except ImportError as exc:
        return f"the session store is missing (preflight_fsm.store: {exc})"
    return None


def worker(location: str, count: int, start_at: float) -> dict[str, Any]:
    """Answer ``count`` two-phase sessions through the store at ``location``."""
    from benchmarks.workloads import LIVE
    from preflight_fsm.store import Sessions, open_store

    store = open_store(location)
    try:
        sessions = Sessions(store)
        ids = [sessions.start(LIVE.intention).id for _ in range(count)]
        time.sleep(max(0.0, start_at - time.time()))
        start = time.time()
        patches = 0
        steps = 0
        for session_id in ids:
            state = None
            for answers in LIVE.steps:
                state = sessions.answer(session_id, answers)
                steps += 1
            if state is not None and state.turn.patch == LIVE.patch:
                patches += 1
        end = time.time()
    finally:
        store.close()
    if patches != count:
        raise AssertionError(f"only {patches} of {count} stored sessions ended with their patch")
    return {"steps": steps, "start": start, "end": end}


def _workers(location: str, count: int, processes: int) -> float:
    """Answered steps per second of ``processes`` workers sharing the store at ``location``."""
    start_at = time.time() + 1.0 + 0.3 * processes + count / 2000
    pool = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.stores",
                "worker",
                location,
                str(count),
                str(start_at),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    results = []
    for proc in pool:
        out, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"a store worker failed:\n{err}")
        results.append(json.loads(out))
    steps = sum(r["steps"] for r in results)
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    return float(steps / wall)


def _skipped(name: str, target: str, why: str) -> Figure:
    return Figure(name, None, "steps/s", target=target, note=f"skipped: {why}")


def _servers(tmp: Path) -> list[tuple[str, str | None, Any, str]]:
    """Each shared store: its name, why it cannot run here (or None), the server's context
    manager yielding its URL, and what a figure's note says about it."""
    return [
        (
            "redis",
            redis_missing(),
            lambda: throwaway_redis(tmp),
            "loopback redis-server; load + restore + step + Lua compare-and-set",
        ),
        (
            "postgres",
            postgres_missing(),
            # fsync on (the tests' servers run without it): a step is a durable commit.
            lambda: throwaway_postgres(options=("-c", "fsync=on")),
            "loopback PostgreSQL 15, fsync on; load + restore + step + UPDATE compare-and-set",
        ),
    ]


def store_figures(count: int, processes: int) -> list[Figure]:
    """SQLite, Redis and PostgreSQL per step, one process and ``processes`` on one store; for
    PostgreSQL also the ratio of ``processes`` servers on one database to one."""
    one_target = "≥ 2,000 steps/s"
    many = f"{processes}_processes"
    names = [
        ("store.sqlite.one_process", one_target),
        (f"store.sqlite.{many}", ""),
        ("store.redis.one_process", ""),
        (f"store.redis.{many}", ""),
        ("store.postgres.one_process", ""),
        (f"store.postgres.{many}", ""),
        (f"store.postgres.{many}.ratio", ""),
    ]
    why = _missing()
    if why is not None:
        return [_skipped(name, target, why) for name, target in names]
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-bench-") as tmp:
        for n, name in ((1, names[0][0]), (processes, names[1][0])):
            path = Path(tmp) / f"sessions-{n}.sqlite3"
            rate = _workers(str(path), count, n)
            figures.append(
                Figure(
                    name,
                    rate,
                    "steps/s",
                    target=one_target if n == 1 else f"{n} processes, one file",
                    ok=rate >= 2000 if n == 1 else None,
                    note="WAL, synchronous=NORMAL; load + restore + step + compare-and-set write",
                )
            )
        for backend, missing, server, note in _servers(Path(tmp)):
            if missing is not None:
                figures += [_skipped(n, t, missing) for n, t in names if f".{backend}." in n]
                continue
            rates: list[float] = []
            with server() as url:
                for n in (1, processes):
                    rates.append(_workers(url, count, n))
                    figures.append(
                        Figure(
                            f"store.{backend}.{'one_process' if n == 1 else many}",
                            rates[-1],
                            "steps/s",
                            target=f"{n} process{'es' * (n > 1)}, one server",
                            note=note,
                        )
                    )
            if backend == "postgres":
                figures.append(
                    Figure(
                        f"store.postgres.{many}.ratio",
                        rates[1] / rates[0],
                        "x",
                        target=f"{processes} servers on one database ÷ one server",
                        note="each worker process a server of its own with its own pool",
                    )
                )
    return figures


if __name__ == "__main__":
    _, command, location, number, start_at = sys.argv
    if command != "worker":
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(worker(location, int(number), float(start_at))))
