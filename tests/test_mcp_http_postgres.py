"""Two real HTTP servers on one PostgreSQL (store/postgres.py behind mcp/http.py): a session
started through one is answered through the other, and survives ``kill -9`` of the server that
acknowledged its last answer, neither lost nor forked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from mcp_servers import call, connect_http, http_server
from postgres_server import empty


async def _start(url: str) -> str:
    async with connect_http(url) as client:
        first = await call(client, "require_clarification", user_intention="Deploy the API")
        return str(first["session_id"])


async def _answer(url: str, sid: str, answers: dict[str, str]) -> dict[str, Any]:
    async with connect_http(url) as client:
        return await call(client, "require_clarification", session_id=sid, answers=answers)


async def _view(url: str, sid: str) -> dict[str, Any]:
    async with connect_http(url) as client:
        return await call(client, "get_session", session_id=sid)


def test_a_session_started_on_one_server_is_answered_on_another_and_read_back_on_the_first(
    tmp_path: Path, postgres_url: str
) -> None:
    empty(postgres_url)
    with (
        http_server(postgres_url, tmp_path, "a") as a,
        http_server(postgres_url, tmp_path, "b") as b,
    ):
        sid = anyio.run(_start, a.url)
        answered = anyio.run(_answer, b.url, sid, {"change_category": "Infra"})
        view = anyio.run(_view, a.url, sid)
    assert ["infra_hosting"] == answered["missing_info"]
    assert (2, {"change_category": "Infra"}) == (view["version"], view["answers"])


def test_an_answer_acknowledged_by_a_server_killed_right_after_is_kept_by_the_other(
    tmp_path: Path, postgres_url: str
) -> None:
    empty(postgres_url)
    with (
        http_server(postgres_url, tmp_path, "a") as a,
        http_server(postgres_url, tmp_path, "b") as b,
    ):
        sid = anyio.run(_start, a.url)
        anyio.run(_answer, a.url, sid, {"change_category": "Infra"})
        a.kill()
        view = anyio.run(_view, b.url, sid)
        done = anyio.run(_answer, b.url, sid, {"infra_hosting": "Cloud"})
    assert (2, {"change_category": "Infra"}) == (view["version"], view["answers"])
    assert 1 == sum(1 for t in view["trace"] if t["trigger"] == "answer")
    assert ("completed", [{"name": "Hosting", "value": "Cloud"}]) == (
        done["status"],
        done["patch"]["fields"],
    )
