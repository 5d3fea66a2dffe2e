"""store/sqlite.py under a long write lock held by another process (issue 30, item 4).

Reads never wait behind writes (in the MCP server too, over stdio and HTTP: D275), and a write
that cannot get the lock within its bound is told the store is busy, quickly, alone. The lock
holder is a real second process. No test waits out the server's 5 s bound: over stdio and HTTP
the holder lets go once the reads are done, and the waiting write then goes through; the server's
refusal is shown in memory, on a store whose bound is a quarter second.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from mcp_servers import call, connect_http, connect_memory, connect_stdio, http_server
from preflight_fsm.errors import StoreUnavailable
from preflight_fsm.store.base import StoredSession
from preflight_fsm.store.sqlite import SqliteStore

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""
INTENTION = "Speed up the checkout page"  # no keywords: the category comes first
READS = 5  # reads a waiting write must not hold up


@contextmanager
def write_lock_held(path: Path) -> Iterator[Callable[[], None]]:
    """Another process holds the store's write lock (``BEGIN EXCLUSIVE``) for the block, or
    until the function the block is given lets it go."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdin is not None
        assert holder.stdout is not None

        def release() -> None:
            assert holder.stdin is not None
            if not holder.stdin.closed:
                holder.stdin.close()
            holder.wait(timeout=30)

        try:
            assert "held" == holder.stdout.readline().strip()
            yield release
        finally:
            release()


def _store_with_a_session(path: Path, timeout: float) -> SqliteStore:
    store = SqliteStore(path, timeout=timeout)
    store.create("s1", '{"x": 1}')
    return store


def test_reads_answer_while_a_write_of_the_same_process_waits_for_the_lock(
    tmp_path: Path,
) -> None:
    store = _store_with_a_session(tmp_path / "s.sqlite3", timeout=60.0)
    with ThreadPoolExecutor(4) as pool:
        with write_lock_held(store.path):
            writing = pool.submit(store.put, "s1", '{"x": 2}', 1)
            done = threading.Event()
            writing.add_done_callback(lambda _: done.set())
            reads = 0
            # While the write waits for the lock (up to 60 s), every read must answer: a read
            # that waited for the write would outlive its 10 s here.
            while not done.is_set() and reads < 20:
                read: Future[StoredSession] = pool.submit(store.get, "s1")
                assert 1 == read.result(timeout=10).version
                reads += 1
        assert (20, 2) == (reads, writing.result(timeout=60).version)
    store.close()


def test_a_write_that_cannot_get_the_lock_in_time_is_told_the_store_is_busy(
    tmp_path: Path,
) -> None:
    store = _store_with_a_session(tmp_path / "s.sqlite3", timeout=0.25)
    with write_lock_held(store.path), pytest.raises(StoreUnavailable) as refused:
        store.put("s1", '{"x": 2}', 1)
    assert "is busy" in str(refused.value)
    assert "nothing was written" in str(refused.value)
    assert "retry" in str(refused.value)
    assert 1 == store.get("s1").version
    store.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_mcp_server_keeps_answering_reads_while_another_process_holds_the_lock(
    transport: str, tmp_path: Path
) -> None:
    """A write that would wait for the lock moves off the event loop to a worker thread (D275,
    D288), so it holds none of the agent's reads; once the holder lets go, the write goes
    through."""
    store = tmp_path / "sessions.sqlite3"
    errors = tmp_path / "stderr"

    async def main(url: str) -> tuple[int, bool, dict[str, object]]:
        with errors.open("a") as errlog, anyio.fail_after(90):
            connected = connect_http(url) if url else connect_stdio(str(store), tmp_path, errlog)
            async with connected as client:
                started = await call(client, "require_clarification", user_intention=INTENTION)
                sid = started["session_id"]
                answer = {"change_category": "Database"}
                with write_lock_held(store) as release:
                    write: dict[str, object] = {}

                    async def step() -> None:
                        write.update(
                            await call(
                                client, "require_clarification", session_id=sid, answers=answer
                            )
                        )

                    reads = 0
                    async with anyio.create_task_group() as group:
                        group.start_soon(step)
                        while not write and reads < READS:
                            shown = await call(client, "get_session", session_id=sid)
                            assert "error" != shown["status"], shown
                            reads += 1
                        waiting = not write
                        await anyio.to_thread.run_sync(release)
                return reads, waiting, write

    if transport == "http":
        with http_server(str(store), tmp_path, "lock") as server:
            reads, waiting, write = anyio.run(main, server.url)
        errors.write_text(server.stderr.read_text())
    else:
        reads, waiting, write = anyio.run(main, "")
    # The reads all answered while the write still waited (for its bound, seconds): one read
    # that waited for the write would have let the write end first.
    assert (READS, True) == (reads, waiting)
    assert "needs_clarification" == write["status"], write
    assert "Traceback" not in errors.read_text()


def test_the_mcp_server_refuses_a_write_held_past_its_bound_as_busy(tmp_path: Path) -> None:
    """The server's write waits its bound for the lock, then is refused as store_unavailable,
    busy, nothing written; a read still answers (in memory, the server stdio serves, on a store
    whose bound is a quarter second instead of 5 s)."""
    store = SqliteStore(tmp_path / "sessions.sqlite3", timeout=0.25)

    async def main() -> tuple[dict[str, object], dict[str, object]]:
        with anyio.fail_after(90):
            async with connect_memory(store) as client:
                started = await call(client, "require_clarification", user_intention=INTENTION)
                sid = started["session_id"]
                with write_lock_held(store.path):
                    write = await call(
                        client,
                        "require_clarification",
                        session_id=sid,
                        answers={"change_category": "Database"},
                    )
                    shown = await call(client, "get_session", session_id=sid)
                return write, shown

    try:
        write, shown = anyio.run(main)
    finally:
        store.close()
    assert "store_unavailable" == write["error"]["code"], write  # type: ignore[index]
    assert "busy" in write["error"]["message"]  # type: ignore[index]
    assert (1, {}) == (shown["version"], shown["answers"])
