"""mcp/store_work.py: a tool's store work runs on the event loop unless it would wait (D288)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import anyio

from preflight_fsm.mcp.store_work import store_work
from preflight_fsm.store import MemoryStore, SessionStore, SqliteStore, StoreWouldWait


class _BusyOnce(MemoryStore):
    """A store that promises not to wait, and whose first call under that promise would."""

    def __init__(self) -> None:
        super().__init__()
        self.trying = False

    def without_waiting(self) -> Any:
        self.trying = True
        return nullcontext()


def _threads_of(store: SessionStore, work: Callable[[], None]) -> tuple[str, list[str]]:
    """The event loop's thread, and the threads ``work`` ran in (in order)."""
    ran: list[str] = []

    def recorded() -> None:
        ran.append(threading.current_thread().name)
        work()

    async def main() -> str:
        await store_work(store, recorded)
        return threading.current_thread().name

    return anyio.run(main), ran


def test_store_work_on_sqlite_runs_on_the_event_loop(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite3") as store:
        loop, ran = _threads_of(store, lambda: None)
    assert [loop] == ran


def test_store_work_that_would_wait_runs_again_in_a_worker_thread() -> None:
    store = _BusyOnce()

    def work() -> None:
        if store.trying:
            store.trying = False
            raise StoreWouldWait("another process holds the write lock")

    loop, ran = _threads_of(store, work)
    assert 2 == len(ran)
    assert loop == ran[0]
    assert loop != ran[1]


def test_store_work_on_a_store_that_may_wait_runs_in_a_worker_thread() -> None:
    loop, ran = _threads_of(MemoryStore(), lambda: None)
    assert 1 == len(ran)
    assert loop != ran[0]
