"""`preflight-fsm mcp` end to end: the real server, the SDK's own client.

Every status in memory (the server ``mcp`` serves over stdio, built in the test's process) and
over HTTP (a subprocess); bad input of every kind, the CLI's default store over stdio, durability
across kill -9, concurrent answers, and two HTTP servers on one real redis-server.
"""

from __future__ import annotations

import json
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from mcp_servers import (
    PREFLIGHT_FSM,
    HttpServer,
    call,
    connect_http,
    connect_memory,
    http_server,
    redis_missing,
    shared_http_server,
    throwaway_redis,
)
from preflight_fsm.cli import app
from preflight_fsm.mcp import DIAGRAM_URI

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """The stdio server's standard error; nothing may be printed there (no traceback)."""
    path = tmp_path / "stdio.stderr"
    with path.open("w+") as handle:
        yield handle
    assert "" == path.read_text()


@pytest.fixture
def http() -> Iterator[HttpServer]:
    """The HTTP server on a SQLite store shared by the tests that only call it."""
    with shared_http_server() as server:
        yield server


@pytest.fixture(params=["memory", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path, http: HttpServer) -> Connect:
    """A way to reach a server: in memory (the one ``mcp`` serves over stdio, in the test's
    process) and over HTTP (a real server process); the stdio transport itself is tested by the
    tests below that start ``mcp`` and by ``test_mcp_stdio.py``."""
    if request.param == "memory":
        return lambda: connect_memory(str(tmp_path / "sessions.sqlite3"))
    return lambda: connect_http(http.url)


def run(connect: Connect, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run ``body`` with a connected client, bounded in time."""

    async def main() -> Any:
        with anyio.fail_after(60):
            async with connect() as client:
                return await body(client)

    return anyio.run(main)


# -- every status --------------------------------------------------------------------------------


def test_a_keyword_intention_asks_its_field_then_completes(connect: Connect) -> None:
    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = await call(client, "require_clarification", user_intention="Add OAuth login")
        done = await call(
            client,
            "require_clarification",
            session_id=first["session_id"],
            answers={"auth_strategy": "oauth"},
        )
        return first, done

    first, done = run(connect, body)
    assert ["auth_strategy", "auth_strategy__other"] == [q["id"] for q in first["questions"]]
    assert ("needs_clarification", 1, 0.5) == (first["status"], first["turn"], first["progress"])
    assert {
        "status": "completed",
        "session_id": first["session_id"],
        "patch": {"category": "Authentication", "fields": [{"name": "Strategy", "value": "OAuth"}]},
        "decided_by": [
            {"name": "Category", "answered_by": "intention"},
            {"name": "Strategy", "answered_by": "agent"},
        ],
        "decision_hint": "adr",
        "progress": 1.0,
        "turn": 1,
    } == done


def test_an_intention_without_keywords_asks_the_category_then_the_field(connect: Connect) -> None:
    async def body(client: Client) -> list[dict[str, Any]]:
        first = await call(
            client, "require_clarification", user_intention="Speed up the checkout page"
        )
        sid = first["session_id"]
        second = await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"change_category": "Database"},
            turn=1,
        )
        third = await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"db_type": "PostgreSQL"},
            turn=2,
        )
        return [first, second, third]

    first, second, third = run(connect, body)
    assert ["change_category", "change_category__other"] == [q["id"] for q in first["questions"]]
    assert (["db_type"], 2) == (second["missing_info"], second["turn"])
    assert [{"name": "Type", "value": "PostgreSQL"}] == third["patch"]["fields"]


def test_other_specify_without_its_text_asks_for_the_text_alone(connect: Connect) -> None:
    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = await call(
            client, "require_clarification", user_intention="Speed up the checkout page"
        )
        sid = first["session_id"]
        second = await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"change_category": "Other (specify)"},
        )
        done = await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"change_category__other": "Payments"},
        )
        return second, done

    second, done = run(connect, body)
    # Preflights' own server returns an empty question list here (it filters __other out).
    assert [("change_category__other", "free_text", False)] == [
        (q["id"], q["type"], q["optional"]) for q in second["questions"]
    ]
    assert ("completed", "Other") == (done["status"], done["patch"]["category"])


def test_a_declined_question_stops_the_session_without_a_decision(connect: Connect) -> None:
    async def body(client: Client) -> dict[str, Any]:
        first = await call(client, "require_clarification", user_intention="Add OAuth login")
        return await call(
            client,
            "require_clarification",
            session_id=first["session_id"],
            answers={"auth_strategy": ""},
        )

    stopped = run(connect, body)
    assert ("stopped", ["auth_strategy"], 0.5, "adr") == (
        stopped["status"],
        stopped["missing_info"],
        stopped["progress"],
        stopped["decision_hint"],
    )
    assert "patch" not in stopped


# -- errors --------------------------------------------------------------------------------------


def test_refused_answers_carry_the_engine_feedback_and_change_nothing(http: HttpServer) -> None:
    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = await call(client, "require_clarification", user_intention="Add OAuth login")
        refused = await call(
            client,
            "require_clarification",
            session_id=first["session_id"],
            answers={"colour": "blue"},
        )
        after = await call(client, "get_session", session_id=first["session_id"])
        return refused, after

    refused, after = run(lambda: connect_http(http.url), body)
    error = refused["error"]
    assert ("invalid_answers", ["colour"]) == (
        error["code"],
        error["feedback"]["issues"]["unknown"],
    )
    assert "auth_strategy" == error["feedback"]["issues"]["missing"][0]["field"]
    assert error["recovery_hint"]
    assert (1, "NeedPrimaryField") == (after["version"], after["state"])


def test_a_finished_session_refuses_more_answers(http: HttpServer) -> None:
    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = await call(client, "require_clarification", user_intention="Add OAuth login")
        sid = first["session_id"]
        await call(
            client, "require_clarification", session_id=sid, answers={"auth_strategy": "OAuth"}
        )
        again = await call(
            client, "require_clarification", session_id=sid, answers={"auth_strategy": "OAuth"}
        )
        shown = await call(client, "require_clarification", session_id=sid)
        return again, shown

    again, shown = run(lambda: connect_http(http.url), body)
    assert ("session_finished", again["session_id"]) == (
        again["error"]["code"],
        shown["session_id"],
    )
    assert "completed" == shown["status"]


def test_answers_to_a_turn_already_answered_are_a_conflict(http: HttpServer) -> None:
    async def body(client: Client) -> dict[str, Any]:
        first = await call(client, "require_clarification", user_intention="Deploy the API")
        sid = first["session_id"]
        await call(
            client, "require_clarification", session_id=sid, answers={"change_category": "Infra"}
        )
        return await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"change_category": "Backend"},
            turn=1,
        )

    late = run(lambda: connect_http(http.url), body)
    assert "session_conflict" == late["error"]["code"]
    assert "turn 2" in late["error"]["message"]


BAD_INPUT = [
    ("no arguments", {}, "invalid_arguments"),
    ("intention a number", {"user_intention": 5}, "invalid_arguments"),
    ("intention an object", {"user_intention": {"a": 1}}, "invalid_arguments"),
    ("intention empty", {"user_intention": "  "}, "invalid_intention"),
    ("intention a placeholder", {"user_intention": "TBD"}, "invalid_intention"),
    ("intention too long", {"user_intention": "x " * 1500}, "invalid_intention"),
    ("intention a control char", {"user_intention": "Add\x07 login"}, "invalid_intention"),
    ("intention undecodable", {"user_intention": "Add \ufffd login"}, "undecodable_text"),
    ("session id a list", {"session_id": ["a"]}, "invalid_arguments"),
    ("unknown session", {"session_id": "no-such-session"}, "session_not_found"),
    ("malformed session id", {"session_id": "../../etc/passwd"}, "session_not_found"),
    (
        "answers a list",
        {"user_intention": "Add OAuth login", "answers": ["OAuth"]},
        "invalid_arguments",
    ),
    ("answers a number", {"user_intention": "Add OAuth login", "answers": 3}, "invalid_arguments"),
    (
        "answers a nested object",
        {"user_intention": "Add OAuth login", "answers": {"auth_strategy": {"x": 1}}},
        "invalid_answers",
    ),
    (
        "an answer far too long",
        {"user_intention": "Add OAuth login", "answers": {"auth_strategy": "y" * 200_000}},
        "invalid_answers",
    ),
    (
        "too many answers",
        {"user_intention": "Add OAuth login", "answers": {f"k{i}": "v" for i in range(500)}},
        "invalid_answers",
    ),
    (
        "an undecodable answer",
        {"user_intention": "Add OAuth login", "answers": {"auth_strategy": "O\ufffdAuth"}},
        "undecodable_text",
    ),
    ("turn a string", {"user_intention": "Add OAuth login", "turn": "two"}, "invalid_arguments"),
    ("turn zero", {"user_intention": "Add OAuth login", "turn": 0}, "invalid_arguments"),
    (
        "context a list",
        {"user_intention": "Add login", "optional_context": [1]},
        "invalid_arguments",
    ),
]


@pytest.mark.parametrize(
    ("arguments", "code"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT]
)
def test_bad_input_gets_an_error_result(
    http: HttpServer, arguments: dict[str, Any], code: str
) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return await call(client, "require_clarification", **arguments)

    result = run(lambda: connect_http(http.url), body)
    assert code == result["error"]["code"], result
    assert result["error"]["message"]
    assert result["error"]["recovery_hint"]


def _post(url: str, body: str, session: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """One JSON-RPC message over plain HTTP (the SDK's client cannot encode a lone surrogate)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session is not None:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
        session = response.headers.get("Mcp-Session-Id") or session
    lines = [line[5:] for line in text.splitlines() if line.startswith("data:")] or [text]
    messages = [json.loads(line) for line in lines if line.strip()]
    return (messages[-1] if messages else None), session


def test_a_lone_surrogate_over_http_is_a_parse_error_and_the_server_serves_on(
    http: HttpServer,
) -> None:
    """The SDK's JSON parser refuses ``"\\ud800"`` before any tool runs: a JSON-RPC parse
    error (-32700), no crash, and the next call is served."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    _, session = _post(http.url, json.dumps(hello), None)
    _post(http.url, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
    raw = (
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
        '"require_clarification", "arguments": {"user_intention": "Add \\ud800 login"}}}'
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        _post(http.url, raw, session)
    assert -32700 == json.loads(refused.value.read())["error"]["code"]

    async def body(client: Client) -> dict[str, Any]:
        return await call(client, "require_clarification", user_intention="Add OAuth login")

    assert "needs_clarification" == run(lambda: connect_http(http.url), body)["status"]


def test_undecodable_bytes_over_stdio_get_an_error_result(tmp_path: Path) -> None:
    """Invalid UTF-8 on the server's stdin reaches the tool as U+FFFD, which it refuses."""
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        ).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
        b'"require_clarification", "arguments": {"user_intention": "Add \xff\xfe login"}}}',
    ]
    # A client keeps stdin open until its replies are in: the SDK cancels in-flight requests at EOF.
    stderr_path = tmp_path / "stdio.stderr"
    with (
        stderr_path.open("wb") as stderr,
        subprocess.Popen(
            [PREFLIGHT_FSM, "mcp", "--store", str(tmp_path / "s.sqlite3")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        ) as server,
    ):
        assert server.stdin is not None
        assert server.stdout is not None
        watchdog = threading.Timer(60, server.kill)
        watchdog.start()
        try:
            server.stdin.write(b"\n".join(lines) + b"\n")
            server.stdin.flush()
            lines_out = iter(server.stdout.readline, b"")
            replies = (json.loads(line) for line in lines_out if line.strip())
            reply = next(r for r in replies if r.get("id") == 2)
            server.stdin.close()
            server.wait()
        finally:
            watchdog.cancel()
    assert "undecodable_text" == reply["result"]["structuredContent"]["error"]["code"]
    assert b"Traceback" not in stderr_path.read_bytes()


def test_get_session_of_an_unknown_id_is_an_error_result(http: HttpServer) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return await call(client, "get_session", session_id="nope")

    assert "session_not_found" == run(lambda: connect_http(http.url), body)["error"]["code"]


def test_a_prefix_of_a_session_id_is_not_looked_up(tmp_path: Path) -> None:
    """The tools take session_id whole (D264): the start of a real session's id is
    session_not_found, the hint saying to send the id whole (a prefix is the command line's)."""

    async def body(client: Client) -> dict[str, Any]:
        started = await call(client, "require_clarification", user_intention="Add a cache")
        return await call(client, "get_session", session_id=started["session_id"][:8])

    refused = run(lambda: connect_memory(str(tmp_path / "sessions.sqlite3")), body)
    assert "session_not_found" == refused["error"]["code"]
    assert refused["error"]["recovery_hint"].startswith("Send session_id whole")


# -- get_session, the diagram, the tool list -----------------------------------------------------


def test_get_session_shows_the_status_answers_and_trace(connect: Connect) -> None:
    async def body(client: Client) -> dict[str, Any]:
        first = await call(client, "require_clarification", user_intention="Add OAuth login")
        sid = first["session_id"]
        await call(
            client, "require_clarification", session_id=sid, answers={"auth_strategy": "OAuth"}
        )
        return await call(client, "get_session", session_id=sid)

    view = run(connect, body)
    assert ("completed", "Done", 2, {"auth_strategy": "OAuth"}) == (
        view["status"],
        view["state"],
        view["version"],
        view["answers"],
    )
    assert [
        ("start", "NeedCategory", "NeedPrimaryField"),
        ("answer", "NeedPrimaryField", "Done"),
    ] == [(t["trigger"], t["source"], t["dest"]) for t in view["trace"]]


def test_the_flow_diagram_is_a_mermaid_resource(connect: Connect) -> None:
    async def body(client: Client) -> tuple[list[str], str]:
        listed = await client.list_resources()
        read = await client.read_resource(DIAGRAM_URI)
        return [str(r.uri) for r in listed.resources], read.contents[0].text  # type: ignore[union-attr]

    uris, text = run(connect, body)
    assert [DIAGRAM_URI] == uris
    assert "flowchart TD" in text
    assert "NeedOther" in text


def test_both_tools_publish_input_and_output_schemas(connect: Connect) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = run(connect, body)
    assert ["get_session", "require_clarification"] == sorted(tools)
    schema = tools["require_clarification"].input_schema["properties"]
    assert {"user_intention", "session_id", "answers", "optional_context", "turn"} == set(schema)
    output = tools["require_clarification"].output_schema
    assert output is not None
    assert "object" == output["type"]


# -- the CLI's store -----------------------------------------------------------------------------


def test_a_session_an_agent_started_is_shown_by_the_cli(
    tmp_path: Path, errlog: TextIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --store the server uses the CLI's default store in its working directory (the
    server a process started there; ``show`` run in the test's process, in that directory)."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> str:
        params = StdioServerParameters(command=PREFLIGHT_FSM, args=["mcp"], cwd=str(tmp_path))
        with anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                first = await call(
                    client, "require_clarification", user_intention="Add OAuth login"
                )
                return str(first["session_id"])

    session_id = anyio.run(main)
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(app, ["show", session_id, "--json"])
    assert 0 == shown.exit_code, shown.output
    assert "NeedPrimaryField" == json.loads(shown.stdout)["turn"]["state"]


# -- durability and concurrency ------------------------------------------------------------------


def test_every_acknowledged_step_survives_kill_9(tmp_path: Path) -> None:
    """Steps acknowledged by a server process killed with SIGKILL are all in its store, read
    afterwards by a fresh server (built as the command builds it, in the test's process)."""
    store = str(tmp_path / "sessions.sqlite3")

    async def first_half(url: str) -> str:
        async with connect_http(url) as client:
            first = await call(client, "require_clarification", user_intention="Deploy the API")
            sid = str(first["session_id"])
            await call(
                client,
                "require_clarification",
                session_id=sid,
                answers={"change_category": "Infra"},
            )
            return sid

    async def second_half(sid: str) -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect_memory(store) as client:
            view = await call(client, "get_session", session_id=sid)
            done = await call(
                client, "require_clarification", session_id=sid, answers={"infra_hosting": "Cloud"}
            )
            return view, done

    with http_server(store, tmp_path, "first") as server:
        session_id = anyio.run(first_half, server.url)
        server.kill()
    view, done = anyio.run(second_half, session_id)
    assert (2, "NeedPrimaryField", {"change_category": "Infra"}) == (
        view["version"],
        view["state"],
        view["answers"],
    )
    assert [{"name": "Hosting", "value": "Cloud"}] == done["patch"]["fields"]


def test_two_agents_answering_one_turn_at_once_apply_it_exactly_once(http: HttpServer) -> None:
    async def main() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with connect_http(http.url) as one, connect_http(http.url) as two:
            first = await call(one, "require_clarification", user_intention="Deploy the API")
            sid = first["session_id"]
            results: list[dict[str, Any]] = []

            async def answer(client: Client, category: str) -> None:
                results.append(
                    await call(
                        client,
                        "require_clarification",
                        session_id=sid,
                        answers={"change_category": category},
                        turn=1,
                    )
                )

            async with anyio.create_task_group() as group:
                group.start_soon(answer, one, "Infra")
                group.start_soon(answer, two, "Backend")
            return results, await call(one, "get_session", session_id=sid)

    results, view = anyio.run(main)
    statuses = sorted(r["status"] for r in results)
    assert ["error", "needs_clarification"] == statuses
    assert "session_conflict" == next(r for r in results if r["status"] == "error")["error"]["code"]
    assert 2 == view["version"]
    assert 1 == sum(1 for t in view["trace"] if t["trigger"] == "answer" and t["turn"] == 1)


def test_many_concurrent_answers_never_fork_a_session(http: HttpServer) -> None:
    """Without ``turn``, racing writers still apply one step: the store's compare-and-set."""

    async def main() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with connect_http(http.url) as client:
            first = await call(client, "require_clarification", user_intention="Deploy the API")
            sid = first["session_id"]
            results: list[dict[str, Any]] = []

            async def answer(category: str) -> None:
                results.append(
                    await call(
                        client,
                        "require_clarification",
                        session_id=sid,
                        answers={"change_category": category},
                    )
                )

            async with anyio.create_task_group() as group:
                for category in ("Infra", "Backend") * 4:
                    group.start_soon(answer, category)
            return results, await call(client, "get_session", session_id=sid)

    results, view = anyio.run(main)
    assert 2 == view["version"]
    assert 1 == sum(1 for r in results if r["status"] == "needs_clarification")
    chosen = view["answers"]["change_category"]
    assert {"change_category": chosen} == view["answers"]


@pytest.mark.skipif(redis_missing() is not None, reason=str(redis_missing()))
def test_two_http_servers_on_one_redis_serve_the_same_sessions(tmp_path: Path) -> None:
    async def start(url: str) -> str:
        async with connect_http(url) as client:
            first = await call(client, "require_clarification", user_intention="Deploy the API")
            return str(first["session_id"])

    async def finish(url: str, sid: str) -> list[dict[str, Any]]:
        async with connect_http(url) as client:
            second = await call(
                client,
                "require_clarification",
                session_id=sid,
                answers={"change_category": "Infra"},
            )
            done = await call(
                client,
                "require_clarification",
                session_id=sid,
                answers={"infra_hosting": "Serverless"},
            )
            return [second, done]

    with (
        throwaway_redis(tmp_path) as redis_url,
        http_server(redis_url, tmp_path, "one") as one,
        http_server(redis_url, tmp_path, "two") as two,
    ):
        session_id = anyio.run(start, one.url)
        second, done = anyio.run(finish, two.url, session_id)
    assert ["infra_hosting"] == second["missing_info"]
    assert ("completed", [{"name": "Hosting", "value": "Serverless"}]) == (
        done["status"],
        done["patch"]["fields"],
    )


# -- the store's own conditions ------------------------------------------------------------------


def test_a_session_past_its_expiry_gets_session_expired(tmp_path: Path) -> None:
    async def main(url: str) -> dict[str, Any]:
        async with connect_http(url) as client:
            first = await call(client, "require_clarification", user_intention="Add OAuth login")
            await anyio.sleep(0.2)  # past --expire-after 0.1
            return await call(client, "get_session", session_id=first["session_id"])

    store = str(tmp_path / "sessions.sqlite3")
    with http_server(store, tmp_path, "expiry", "--expire-after", "0.1") as server:
        expired = anyio.run(main, server.url)
    assert "session_expired" == expired["error"]["code"]


def test_a_tampered_stored_session_gets_corrupt_session() -> None:
    import sqlite3

    async def start(url: str) -> str:
        async with connect_http(url) as client:
            first = await call(client, "require_clarification", user_intention="Add OAuth login")
            return str(first["session_id"])

    async def answer(url: str, sid: str) -> dict[str, Any]:
        async with connect_http(url) as client:
            return await call(
                client, "require_clarification", session_id=sid, answers={"auth_strategy": "OAuth"}
            )

    with shared_http_server() as server:
        session_id = anyio.run(start, server.url)
        with sqlite3.connect(server.store) as db:
            db.execute(
                "UPDATE sessions SET snapshot = replace(snapshot, 'Add OAuth', 'Add SAML') "
                "WHERE id = ?",
                (session_id,),
            )
        refused = anyio.run(answer, server.url, session_id)
    assert ("corrupt_session", session_id) == (refused["error"]["code"], refused["session_id"])


@pytest.mark.skipif(redis_missing() is not None, reason=str(redis_missing()))
def test_a_store_that_went_away_gets_store_unavailable(tmp_path: Path) -> None:
    async def call_once(url: str, **arguments: Any) -> dict[str, Any]:
        async with connect_http(url) as client:
            return await call(client, "require_clarification", **arguments)

    redis = throwaway_redis(tmp_path)
    redis_url = redis.__enter__()
    try:
        with http_server(redis_url, tmp_path, "redis") as server:
            first = anyio.run(partial(call_once, server.url, user_intention="Add OAuth login"))
            redis.__exit__(None, None, None)  # the redis-server stops
            down = anyio.run(partial(call_once, server.url, session_id=first["session_id"]))
            assert "Traceback" not in server.stderr.read_text()
    finally:
        redis.__exit__(None, None, None)
    assert "store_unavailable" == down["error"]["code"]


def test_a_request_over_the_http_body_limit_is_refused_and_the_server_serves_on(
    http: HttpServer,
) -> None:
    """Over 4 MiB the SDK's HTTP transport answers 413 before any tool runs; nothing breaks."""
    from mcp.shared.exceptions import MCPError

    async def huge(client: Client) -> None:
        with pytest.raises(MCPError):
            await client.call_tool(
                "require_clarification",
                {
                    "user_intention": "Add OAuth login",
                    "answers": {"auth_strategy": "x" * 5_000_000},
                },
            )

    async def after(client: Client) -> dict[str, Any]:
        return await call(client, "require_clarification", user_intention="Add OAuth login")

    run(lambda: connect_http(http.url), huge)
    assert "needs_clarification" == run(lambda: connect_http(http.url), after)["status"]


def test_servers_sharing_a_seal_key_serve_each_others_sealed_sessions(tmp_path: Path) -> None:
    """C11: --seal-key-file seals stored snapshots; a server without that key refuses them (the
    session sealed by a server process, read by servers built as the command builds them)."""
    store = str(tmp_path / "sessions.sqlite3")
    keys = tmp_path / "seal.keys"
    keys.write_text("s" * 64 + "\n")
    other = tmp_path / "other.keys"
    other.write_text("o" * 64 + "\n")

    async def start(url: str) -> str:
        async with connect_http(url) as client:
            first = await call(client, "require_clarification", user_intention="Deploy the API")
            return str(first["session_id"])

    async def view(key_file: Path, sid: str) -> dict[str, Any]:
        async with connect_memory(store, seal_key_file=key_file) as client:
            return await call(client, "get_session", session_id=sid)

    with http_server(store, tmp_path, "sealed", "--seal-key-file", str(keys)) as server:
        session_id = anyio.run(start, server.url)
    same = anyio.run(view, keys, session_id)
    refused = anyio.run(view, other, session_id)
    assert "NeedCategory" == same["state"]
    assert ("error", "corrupt_session") == (refused["status"], refused["error"]["code"])
    assert "seal" in refused["error"]["message"]


def test_serve_keeps_the_interpreters_collector_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """D310: the server freezes nothing and keeps the collector's thresholds as the interpreter
    set them (D304's settings paid under 10 %)."""
    import gc

    from preflight_fsm.mcp import serve

    seen: list[tuple[int, tuple[int, int, int]]] = []
    monkeypatch.setattr(
        anyio, "run", lambda *args: seen.append((gc.get_freeze_count(), gc.get_threshold()))
    )
    threshold = gc.get_threshold()
    frozen = gc.get_freeze_count()
    serve(object(), "stdio")  # type: ignore[arg-type]  # the transport never runs
    assert [(frozen, threshold)] == seen
