"""mcp/tools.py: the tools over a Sessions service, called in process."""

from __future__ import annotations

import threading
from typing import Any

import anyio

from preflight_fsm.mcp.request_state import RoundSealer
from preflight_fsm.mcp.tools import ClarificationTools
from preflight_fsm.store import MemoryStore, Sessions


def test_get_session_reports_the_sessions_own_expiry() -> None:
    """A session keeps the expiry it started with (D64); get_session reports that one, not the
    server's default for new sessions."""
    store = MemoryStore(expire_after=1800)
    sessions = Sessions(store)
    started = sessions.start("Add OAuth login", expire_after=60)
    tools = ClarificationTools(sessions, RoundSealer())

    async def view() -> Any:
        return await tools.get_session(started.id)

    result = anyio.run(view)
    data = result.structured_content
    assert data is not None
    assert started.updated_at + 60 == data["expires_at"]


def _store_work_thread(single_client: bool) -> tuple[int, int]:
    """The thread a tool's store work ran on, and the event loop's."""
    tools = ClarificationTools(Sessions(MemoryStore()), RoundSealer(), single_client=single_client)

    async def both() -> tuple[int, int]:
        return await tools._blocking(threading.get_ident), threading.get_ident()

    return anyio.run(both)


def test_a_server_of_many_clients_does_store_work_in_a_worker_thread() -> None:
    """Over HTTP a slow store must not stall the other clients' calls."""
    worker, loop = _store_work_thread(single_client=False)
    assert worker != loop


def test_a_server_of_one_client_does_store_work_on_its_event_loop() -> None:
    """Over stdio the one agent waits for the answer anyway: no thread hop per call (D275)."""
    worker, loop = _store_work_thread(single_client=True)
    assert loop == worker
