"""Where a tool's store work runs: on the event loop when the store promises not to wait, else
in a worker thread (D288).

A worker thread costs each call two thread switches (about a tenth of an echo call's CPU on
this machine, more under load), and over stdio one agent waits for its answer anyway. But store
work that waits (SQLite's write lock held by another process, up to its bound; a network round
trip) must not hold the loop: the agent's reads would wait behind it (D275,
``tests/test_store_lock_holder.py``). So the work is first tried on the loop inside the store's
``without_waiting()``, where a call that would wait stops at once having changed nothing, and
only then run again in a worker thread; a store that cannot promise it (Redis, PostgreSQL) runs
it in the thread from the start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

from preflight_fsm.store import SessionStore, StoreWouldWait

__all__ = ["store_work"]

_T = TypeVar("_T")


async def store_work(store: SessionStore, work: Callable[[], _T]) -> _T:
    """``work()``, which uses ``store``: on the loop if it need not wait, else in a thread.

    ``work`` must change nothing before its store call refuses to wait (a load, then a step in
    memory, then a compare-and-set write is such work): it then runs again from the start.
    """
    trying = store.without_waiting()
    if trying is not None:
        try:
            with trying:
                return work()
        except StoreWouldWait:
            pass  # another thread or process holds a lock: wait for it off the loop
    return await anyio.to_thread.run_sync(work)
