"""mcp/tools.py: the tools over a Sessions service, called in process."""

from __future__ import annotations

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
