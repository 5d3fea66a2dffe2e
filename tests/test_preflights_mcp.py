"""Preflights' agent tools on the engine, through the SDK's own client.

The server is the one ``preflight-fsm mcp --preflights --store …`` (the command agents run)
serves, built in the test's process and reached in memory, in both protocol eras; the test of a
restart starts the command as a subprocess first, the client ``mcp.Client`` with
``StdioServerParameters``, as an agent's host would connect.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("preflights")
mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

import warm_processes  # noqa: E402
from mcp_servers import connect_memory  # noqa: E402
from preflights_e2e import (  # noqa: E402
    CASES,
    CORE_ANSWERS,
    OTHER,
    Case,
    expected_decisions,
    make_repo,
    written_decisions,
)

MAX_ROUNDS = 6  # engine turns (at most 3) plus Preflights' core follow-ups


def server(store: Path) -> StdioServerParameters:
    """How a host starts the server: the installed command, a store of its own."""
    command = warm_processes.program()
    return StdioServerParameters(
        command=command, args=["mcp", "--preflights", "--store", str(store)]
    )


def with_client(
    store: Path,
    body: Callable[[Client], Awaitable[Any]],
    mode: str = "auto",
    *,
    process: bool = False,
) -> Any:
    """Run ``body`` with a client connected to a fresh server on ``store``: in memory, or with
    ``process`` a server process over stdio."""

    async def main() -> Any:
        with anyio.fail_after(120):
            if process:
                async with Client(server(store), mode=mode) as client:
                    return await body(client)
            async with connect_memory(str(store), mode=mode, preflights=True) as client:
                return await body(client)

    return anyio.run(main)


async def call(client: Client, **arguments: Any) -> dict[str, Any]:
    """require_clarification's structured result."""
    result = await client.call_tool("require_clarification", arguments)
    assert not result.is_error, result.content
    structured: dict[str, Any] = result.structured_content
    return structured


async def complete(client: Client, case: Case, repo: Path) -> dict[str, Any]:
    """Start ``case`` in ``repo`` and answer each round as an agent would, by question id."""
    result = await call(client, user_intention=case.intention, repo_path=str(repo))
    rounds = case.rounds()
    for _ in range(MAX_ROUNDS):
        if result["status"] != "needs_clarification":
            break
        asked = {q["id"] for q in result["questions"]}
        core = {k: v for k, v in CORE_ANSWERS.items() if k in asked}
        answers = core or rounds.pop(0)
        result = await call(
            client,
            user_intention=case.intention,
            session_id=result["session_id"],
            answers=answers,
        )
    return result


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """Every case, through one server: its last result and its repository."""
    root = tmp_path_factory.mktemp("mcp")

    async def body(client: Client) -> dict[str, tuple[dict[str, Any], Path]]:
        results = {}
        for case in CASES:
            repo, _ = make_repo(root / case.id)
            results[case.id] = (await complete(client, case, repo), repo)
        return results

    found: dict[str, tuple[dict[str, Any], Path]] = with_client(root / "store.sqlite3", body)
    return found


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_require_clarification_completes_with_the_decision_chosen(
    completed: dict[str, tuple[dict[str, Any], Path]], case: Case
) -> None:
    """Each intention reaches completed; the artifacts listed are on disk with the decision."""
    result, repo = completed[case.id]
    assert "completed" == result["status"], result
    assert all((repo / a["path"]).is_file() for a in result["artifacts_created"])
    assert expected_decisions(case, repo) == written_decisions(repo)


def test_the_tools_are_preflights_two(tmp_path: Path) -> None:
    """The server lists require_clarification and read_architecture."""

    async def body(client: Client) -> list[str]:
        return sorted(tool.name for tool in (await client.list_tools()).tools)

    assert ["read_architecture", "require_clarification"] == with_client(
        tmp_path / "s.sqlite3", body
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "handshake-era"])
def test_a_session_completes_under_both_protocol_eras(tmp_path: Path, mode: str) -> None:
    """A client of either protocol era (probe, or the initialize handshake) completes a session
    (in memory: the stdio process is test_sessions_survive_a_server_restart's)."""
    case = next(c for c in CASES if c.id == "other-field-after-category")
    repo, _ = make_repo(tmp_path)
    result = with_client(tmp_path / "s.sqlite3", lambda client: complete(client, case, repo), mode)
    assert "completed" == result["status"], result
    assert expected_decisions(case, repo) == written_decisions(repo)


def test_other_companions_are_listed_with_their_condition(tmp_path: Path) -> None:
    """Every choice comes with its __other companion (Preflights' own server drops them)."""
    repo, _ = make_repo(tmp_path)

    async def body(client: Client) -> dict[str, Any]:
        return await call(client, user_intention="Improve the checkout flow", repo_path=str(repo))

    result = with_client(tmp_path / "s.sqlite3", body)
    companion = {
        "id": "change_category__other",
        "type": "free_text",
        "question": "Please specify (What type of change is this?):",
        "optional": True,
        "depends_on_question_id": "change_category",
        "depends_on_value": OTHER,
    }
    assert companion == result["questions"][1]


def test_sessions_survive_a_server_restart(tmp_path: Path) -> None:
    """A session started on a server process is continued, once that process has exited, by
    a fresh server on the same store (store-backed; built as the command builds it, in the
    test's process)."""
    repo, _ = make_repo(tmp_path)
    store = tmp_path / "s.sqlite3"

    async def first(client: Client) -> dict[str, Any]:
        return await call(client, user_intention="Improve the checkout flow", repo_path=str(repo))

    async def second(client: Client, session_id: str) -> dict[str, Any]:
        await call(
            client,
            user_intention="",
            session_id=session_id,
            answers={"change_category": "Database"},
        )
        return await call(
            client,
            user_intention="",
            session_id=session_id,
            answers={"db_type": "MySQL", **CORE_ANSWERS},
        )

    started = with_client(store, first, process=True)  # the process exits with its client
    done = with_client(store, lambda client: second(client, started["session_id"]))
    assert "completed" == done["status"], done
    assert "Decision: Database - Type=MySQL" == written_decisions(repo)[0]


def test_declining_is_a_stop_without_a_decision(tmp_path: Path) -> None:
    """A placeholder as the Other text ends the session as NO_DECISION, nothing written."""
    repo, _ = make_repo(tmp_path)

    async def body(client: Client) -> dict[str, Any]:
        started = await call(client, user_intention="Add passkey login", repo_path=str(repo))
        answers = {"auth_strategy": OTHER, "auth_strategy__other": "tbd"}
        return await call(
            client, user_intention="", session_id=started["session_id"], answers=answers
        )

    result = with_client(tmp_path / "s.sqlite3", body)
    assert ("error", "NO_DECISION") == (result["status"], result["error"]["code"])
    assert not (repo / "docs").exists()


def test_an_unknown_session_is_reported(tmp_path: Path) -> None:
    """Continuing a session that does not exist is SESSION_NOT_FOUND, not a crash."""
    repo, _ = make_repo(tmp_path)

    async def body(client: Client) -> dict[str, Any]:
        return await call(
            client, user_intention="x", session_id="nope", answers={"a": "b"}, repo_path=str(repo)
        )

    result = with_client(tmp_path / "s.sqlite3", body)
    assert "SESSION_NOT_FOUND" == result["error"]["code"]


def test_a_long_optional_context_still_asks(tmp_path: Path) -> None:
    """An intention over 2,000 characters with optional_context appended is asked, no error."""
    repo, _ = make_repo(tmp_path)

    async def body(client: Client) -> dict[str, Any]:
        return await call(
            client,
            user_intention="Add login to the admin dashboard",
            optional_context="The admin area is used daily. " * 100,
            repo_path=str(repo),
        )

    result = with_client(tmp_path / "s.sqlite3", body)
    assert ["auth_strategy", "auth_strategy__other"] == [q["id"] for q in result["questions"]]


def test_read_architecture_reads_the_decisions_written(
    completed: dict[str, tuple[dict[str, Any], Path]], tmp_path: Path
) -> None:
    """read_architecture returns the categories Preflights recorded in the repository."""
    _, repo = completed["keyword-auth"]

    async def body(client: Client) -> dict[str, Any]:
        result = await client.call_tool("read_architecture", {"repo_path": str(repo)})
        structured: dict[str, Any] = result.structured_content
        return structured

    result = with_client(tmp_path / "s.sqlite3", body)
    expected = {"Authentication": {"Strategy": "Magic Link"}}
    assert ("success", expected) == (result["status"], result["architecture"]["categories"])


def test_the_server_never_imports_preflights_own_mcp_server() -> None:
    """Preflights' 1.x-SDK server module (preflights.mcp) is never imported: built here, in the
    test's process, whose modules only accumulate (whatever imported it, before or now, left it
    in ``sys.modules``; no test imports it), not in a fresh interpreter that would spend 1.7 s
    of CPU importing the same modules."""
    from preflight_fsm.integrations.preflights.agent_tools import build_preflights_server

    build_preflights_server("memory:")
    assert [] == sorted(m for m in sys.modules if m.startswith("preflights.mcp"))


def test_the_http_server_says_only_where_it_serves(tmp_path: Path) -> None:
    """Over HTTP a session's requests log nothing (no INFO line per request): standard error
    says where the server serves and that it stopped; a refused text is hinted as a tool call,
    never as a `pf` command."""
    from mcp_servers import connect_http, http_server

    repo, _ = make_repo(tmp_path / "repo")

    async def body(url: str) -> dict[str, Any]:
        async with connect_http(url) as client:
            started = await call(client, user_intention="Add passkey login", repo_path=str(repo))
            asked = {"user_intention": "Add passkey login", "session_id": started["session_id"]}
            too_long = {"auth_strategy": OTHER, "auth_strategy__other": "x" * 600}
            refused = await client.call_tool(
                "require_clarification", {**asked, "answers": too_long}
            )
            assert isinstance(refused.structured_content, dict)
            return refused.structured_content

    with http_server(str(tmp_path / "store.sqlite3"), tmp_path, "pf", "--preflights") as running:
        results = anyio.run(body, running.url)
    said = running.stderr.read_text().splitlines()
    assert [
        f"preflight-fsm: serving MCP at {running.url} (sessions in {tmp_path}/store.sqlite3); "
        "Ctrl-C stops it",
        f"preflight-fsm: stopped serving {running.url}",
    ] == said
    assert "INVALID_ANSWER" == results["error"]["code"]
    assert "require_clarification" in results["error"]["recovery_hint"]
    assert "pf answer" not in results["error"]["recovery_hint"]


def test_an_identical_empty_call_over_http_is_awaiting_answer(tmp_path: Path) -> None:
    """Over HTTP, an agent's call without answers on a session that owes its "Other (specify)"
    text is AWAITING_ANSWER naming the text, as under pf, not the same question again."""
    from mcp_servers import connect_http, shared_preflights_server

    repo, _ = make_repo(tmp_path / "repo")

    async def body(url: str) -> list[dict[str, Any]]:
        async with connect_http(url) as client:
            started = await call(client, user_intention="Add passkey login", repo_path=str(repo))
            asked = {"user_intention": "Add passkey login", "session_id": started["session_id"]}
            owed = await call(client, **asked, answers={"auth_strategy": OTHER})
            again = await client.call_tool("require_clarification", {**asked, "answers": {}})
            assert isinstance(again.structured_content, dict)
            return [owed, again.structured_content]

    with shared_preflights_server(tmp_path) as running:
        owed, again = anyio.run(body, running.url)
    assert ["auth_strategy__other"] == [q["id"] for q in owed["questions"]]
    assert "AWAITING_ANSWER" == again["error"]["code"], again
    assert "auth_strategy__other" in again["error"]["recovery_hint"]
