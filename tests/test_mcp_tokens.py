"""Bearer tokens from the operator's file (mcp/tokens.py, `preflight-fsm tokens add`), and a
real server behind them: 401 without a valid token, a principal on every step, sessions that
belong to their principal (and team)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest

from mcp_servers import PREFLIGHT_FSM, HttpServer, call, client_tls, connect_http, http_server
from preflight_fsm.integrations.preflights.sessions import KEY_PREFIX, OWNER
from preflight_fsm.mcp.tokens import (
    TOKEN_PREFIX,
    InvalidTokensFile,
    TokenHolder,
    add_token,
    read_tokens,
)
from preflight_fsm.store import open_store


def test_a_token_is_written_hashed_and_read_back_as_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    token = add_token(path, "alice", "payments")
    assert token.startswith(TOKEN_PREFIX)
    assert token not in path.read_text()
    assert TokenHolder("alice", "payments") == read_tokens(path).holder(token)


def test_the_tokens_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    add_token(path, "alice")
    assert 0o600 == path.stat().st_mode & 0o777


def test_an_unknown_token_has_no_holder(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    add_token(path, "alice")
    assert read_tokens(path).holder(TOKEN_PREFIX + "guessed") is None


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ('[[token]]\nprincipal = "a"\nsha256 = "00"\n', "sha256"),
        ('[[token]]\nprincipal = " a"\nsha256 = "' + "0" * 64 + '"\n', "principal"),
        ('[[token]]\nprincipal = "a"\nrole = "x"\nsha256 = "' + "0" * 64 + '"\n', "role"),
        ("[people]\n", "people"),
    ],
    ids=["short digest", "padded principal", "unknown key", "unknown table"],
)
def test_a_broken_tokens_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, content: str, named: str
) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(content)
    with pytest.raises(InvalidTokensFile, match=named):
        read_tokens(path)


def test_tokens_add_prints_the_token_once_on_standard_output(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    done = subprocess.run(
        [PREFLIGHT_FSM, "tokens", "add", "alice", "--tokens", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    token = done.stdout.strip()
    assert (0, "alice") == (done.returncode, read_tokens(path).holder(token).principal)  # type: ignore[union-attr]
    assert token not in done.stderr


NEVER_ISSUED = "00000000-0000-4000-8000-000000000001"


@dataclass
class TeamServer:
    server: HttpServer
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamServer]:
    """A server behind a tokens file: alice and bob in team pay, carol alone."""
    directory = tmp_path_factory.mktemp("tokens")
    path = directory / "tokens.toml"
    tokens = {
        "alice": add_token(path, "alice", "pay"),
        "bob": add_token(path, "bob", "pay"),
        "carol": add_token(path, "carol"),
    }
    store = str(directory / "s.sqlite3")
    with http_server(store, directory, "tokens", "--tokens", str(path)) as server:
        yield TeamServer(server, tokens)
    assert "Traceback" not in server.stderr.read_text()


@pytest.mark.parametrize(
    "authorization", [None, "Bearer " + TOKEN_PREFIX + "forged", "Basic YWxpY2U6eA=="]
)
def test_a_request_without_a_valid_token_gets_401_with_www_authenticate(
    team: TeamServer, authorization: str | None
) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = httpx2.post(
        team.server.url, content=b"{}", headers=headers, timeout=30, verify=client_tls()
    )
    assert 401 == response.status_code
    assert response.headers["www-authenticate"].startswith("Bearer ")


def test_a_tool_call_with_a_forged_token_runs_nothing(team: TeamServer) -> None:
    call_tool = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "require_clarification", "arguments": {"user_intention": "Add login"}},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer " + TOKEN_PREFIX + "forged",
    }
    before = _stored(team)
    response = httpx2.post(
        team.server.url, json=call_tool, headers=headers, timeout=30, verify=client_tls()
    )
    assert (401, before) == (response.status_code, _stored(team))


def _stored(team: TeamServer) -> list[str]:
    """The keys in the team server's store (shared by the module's tests)."""
    opened = open_store(team.server.store)
    try:
        return sorted(opened.list())
    finally:
        opened.close()


def test_each_step_records_the_principal_that_answered(team: TeamServer) -> None:
    async def run() -> dict[str, object]:
        async with connect_http(team.server.url, token=team.tokens["alice"]) as client:
            started = await call(client, "require_clarification", user_intention="Add OAuth login")
            sid = started["session_id"]
            answers = {"auth_strategy": "OAuth"}
            await call(client, "require_clarification", session_id=sid, answers=answers)
            return await call(client, "get_session", session_id=sid)

    view = anyio.run(run)
    assert ("alice", ["alice"]) == (view["owner"], [s["principal"] for s in view["steps"]])  # type: ignore[attr-defined]


def _read_as(team: TeamServer, owner: str, reader: str) -> tuple[str, str]:
    async def run() -> tuple[str, str]:
        async with connect_http(team.server.url, token=team.tokens[owner]) as client:
            started = await call(client, "require_clarification", user_intention="Add OAuth login")
        async with connect_http(team.server.url, token=team.tokens[reader]) as client:
            seen = await call(client, "get_session", session_id=started["session_id"])
            missing = await call(client, "get_session", session_id=NEVER_ISSUED)
        return seen.get("status", ""), json.dumps(
            [seen.get("error", {}).get("code"), missing.get("error", {}).get("code")]
        )

    return anyio.run(run)


def test_another_principal_gets_session_not_found_as_for_an_id_never_issued(
    team: TeamServer,
) -> None:
    status, codes = _read_as(team, "alice", "carol")
    assert ("error", '["session_not_found", "session_not_found"]') == (status, codes)


def test_a_teammate_reads_the_session(team: TeamServer) -> None:
    status, _ = _read_as(team, "alice", "bob")
    assert "needs_clarification" == status


def test_preflights_tools_record_the_principal_and_hide_sessions_from_others(
    tmp_path: Path,
) -> None:
    """`mcp --preflights` behind tokens: the owner continues its session, recorded under its
    name; another principal's call finds no such session."""
    path = tmp_path / "tokens.toml"
    alice, carol = add_token(path, "alice"), add_token(path, "carol")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    extra = ("--preflights", "--tokens", str(path))
    with http_server(str(tmp_path / "s.sqlite3"), tmp_path, "pf", *extra) as server:

        async def as_(token: str, **arguments: object) -> dict[str, object]:
            async with connect_http(server.url, token=token) as client:
                result = await client.call_tool(
                    "require_clarification",
                    {"user_intention": "Add login to the admin page", **arguments},
                )
            assert isinstance(result.structured_content, dict)
            return result.structured_content

        started = anyio.run(lambda: as_(alice))
        sid = started["session_id"]
        chosen = {"auth_strategy": "OAuth"}
        stranger = anyio.run(lambda: as_(carol, session_id=sid, answers=chosen))
        anyio.run(lambda: as_(alice, session_id=sid, answers=chosen))
        store = open_store(str(tmp_path / "s.sqlite3"))
        owner = json.loads(store.get(KEY_PREFIX + str(sid)).snapshot)[OWNER]
        store.close()
        more = {"allowlist_paths": "src/", "acceptance_criteria": "tests pass"}
        done = anyio.run(lambda: as_(alice, session_id=sid, answers=more))
    records = "".join(p.read_text() for p in (tmp_path / "docs").rglob("*.md"))
    assert "SESSION_NOT_FOUND" == stranger["error"]["code"]  # type: ignore[index]
    assert ("completed", "alice") == (done["status"], owner)
    assert "alice" in records


def test_team_tables_group_principals_without_a_token_here(tmp_path: Path) -> None:
    """An identity provider's subjects join a team through [[team]] tables."""
    path = tmp_path / "tokens.toml"
    add_token(path, "alice", "pay")
    with path.open("a") as stream:
        stream.write('\n[[team]]\nname = "pay"\nmembers = ["sub-1", "sub-2"]\n')
    assert {"alice": "pay", "sub-1": "pay", "sub-2": "pay"} == read_tokens(path).teams()


def test_a_principal_in_two_teams_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    add_token(path, "alice", "pay")
    with path.open("a") as stream:
        stream.write('\n[[team]]\nname = "ops"\nmembers = ["alice"]\n')
    with pytest.raises(InvalidTokensFile, match="one team"):
        read_tokens(path)
