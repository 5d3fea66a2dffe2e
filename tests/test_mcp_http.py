"""Serving over HTTP (mcp/http.py): the store checked before listening, /healthz, the refusal to
serve a network address without authentication, bounds per client, files only under the
operator's repository roots (`--preflights`)."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from mcp_servers import (
    PREFLIGHT_FSM,
    call,
    client_tls,
    connect_http,
    http_server,
    shared_http_server,
    shared_preflights_server,
    throwaway_redis,
)
from preflight_fsm.mcp.tokens import add_token

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
)


def _mcp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT_FSM, "mcp", "--transport", "http", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_store_that_cannot_be_reached_exits_8_before_listening(tmp_path: Path) -> None:
    done = _mcp("--store", "redis://127.0.0.1:1", "--port", "1", cwd=tmp_path)
    assert 8 == done.returncode
    assert "serving" not in done.stderr


def test_a_network_address_without_authentication_is_refused_naming_the_options(
    tmp_path: Path,
) -> None:
    done = _mcp("--host", "0.0.0.0", "--store", str(tmp_path / "s.sqlite3"), cwd=tmp_path)
    assert 2 == done.returncode
    assert "--tokens" in done.stderr
    assert "--insecure-no-auth" in done.stderr


def test_healthz_says_the_store_is_reachable_to_a_load_balancer_asking_by_address() -> None:
    with shared_http_server() as server:
        health = server.url.replace("/mcp", "/healthz")
        response = httpx2.get(
            health, headers={"Host": "10.0.0.5:8765"}, timeout=30, verify=client_tls()
        )
    assert (200, "reachable") == (response.status_code, response.json()["store"])


def _initialize(url: str, token: str) -> int:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
    }
    return httpx2.post(
        url, content=INITIALIZE, headers=headers, timeout=30, verify=client_tls()
    ).status_code


def test_one_client_opening_sessions_as_fast_as_it_can_leaves_another_served(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.toml"
    greedy, other = add_token(tokens, "greedy"), add_token(tokens, "other")
    extra = ("--tokens", str(tokens), "--max-sessions-per-client", "4")
    with http_server(str(tmp_path / "s.sqlite3"), tmp_path, "quota", *extra) as server:
        greedy_statuses = [_initialize(server.url, greedy) for _ in range(12)]

        async def served() -> str:
            async with connect_http(server.url, token=other, mode="legacy") as client:
                result = await call(client, "require_clarification", user_intention="Add login")
            return str(result["status"])

        status = anyio.run(served)
    assert ([200] * 4 + [429] * 8, "needs_clarification") == (greedy_statuses, status)


@pytest.fixture
def repositories(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A git repository under the shared server's root (the parent of every test's
    ``tmp_path``), and one outside it (a directory of its own, removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-elsewhere-") as elsewhere:
        inside, outside = tmp_path / "app", Path(elsewhere) / "repo"
        for repo in (inside, outside):
            repo.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
        yield inside, outside


def test_preflights_over_http_refuses_a_repository_outside_the_roots_and_writes_nothing(
    tmp_path: Path, repositories: tuple[Path, Path]
) -> None:
    inside, outside = repositories
    with shared_preflights_server(tmp_path) as server:

        async def start(repo: Path) -> dict[str, object]:
            async with connect_http(server.url) as client:
                result = await client.call_tool(
                    "require_clarification",
                    {"user_intention": "Add OAuth login", "repo_path": str(repo)},
                )
            data = result.structured_content
            assert isinstance(data, dict)
            return data

        refused = anyio.run(start, outside)
        served = anyio.run(start, inside)
    assert "REPO_NOT_ALLOWED" == refused["error"]["code"]  # type: ignore[index]
    assert "--repo-root" in refused["error"]["message"]  # type: ignore[index]
    assert [".git"] == sorted(p.name for p in outside.iterdir())
    assert "error" != served["status"]


def test_an_evicting_redis_is_refused_at_start_naming_the_option(tmp_path: Path) -> None:
    with throwaway_redis(tmp_path, options=("--maxmemory-policy", "allkeys-lru")) as url:
        done = _mcp("--store", url, "--port", "1", cwd=tmp_path)
    assert 2 == done.returncode
    assert "allkeys-lru" in done.stderr
    assert "--accept-evicting-store" in done.stderr


def test_a_redis_without_persistence_is_named_at_start(tmp_path: Path) -> None:
    with throwaway_redis(tmp_path) as url, http_server(url, tmp_path, "volatile") as server:
        pass
    assert "appendonly" in server.stderr.read_text()


def test_a_client_sending_its_request_head_too_slowly_is_cut_off(tmp_path: Path) -> None:
    with http_server(
        str(tmp_path / "s.sqlite3"), tmp_path, "slow", "--header-timeout", "1"
    ) as server:
        port = int(server.url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
            slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed = slow.recv(1024)  # blocks until the server closes the connection
        healthy = httpx2.get(
            server.url.replace("/mcp", "/healthz"), timeout=30, verify=client_tls()
        )
    assert (b"", 200) == (closed, healthy.status_code)


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        count: int = db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    db.close()
    return count


def test_preflights_over_http_reclaims_expired_sessions_periodically(tmp_path: Path) -> None:
    """`mcp --preflights --transport http` removes an expired session nobody reads again from
    its store every --reclaim-interval, as the engine's server does (issue 29)."""
    from preflight_fsm.store import Sessions, open_store

    path = tmp_path / "s.sqlite3"
    with open_store(path) as store:
        Sessions(store).start("Add OAuth login", expire_after=0.001)
    assert 1 == _rows(path)  # expired, but no read has removed it
    extra = ("--preflights", "--reclaim-interval", "0.1")
    with http_server(str(path), tmp_path, "reclaim", *extra):
        deadline = time.monotonic() + 60
        while _rows(path) and time.monotonic() < deadline:
            time.sleep(0.05)  # polls the file; the server reclaims on its own clock
        left = _rows(path)
    assert 0 == left


def test_deploy_mds_option_table_names_real_options_with_their_defaults() -> None:
    """docs/deploy.md's table restates each option and its default: held equal to the command
    and to HttpLimits (STYLE.md item 13)."""
    from typer.main import get_command

    from preflight_fsm.cli import app
    from preflight_fsm.cli import mcp as _mcp  # noqa: F401 - registers the command
    from preflight_fsm.mcp.http import HttpLimits

    text = (Path(__file__).resolve().parent.parent / "docs" / "deploy.md").read_text()
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| `--")]
    command = get_command(app).get_command(None, "mcp")  # type: ignore[attr-defined]
    known = {opt for param in command.params for opt in param.opts}
    named = {cell.split("`")[1].split()[0] for cell, _ in rows}
    limits = HttpLimits()
    defaults = {
        "--max-sessions-per-client": str(limits.max_sessions_per_client),
        "--max-sessions": str(limits.max_sessions),
        "--session-idle-timeout": f"{limits.session_idle_timeout:g}",
        "--header-timeout": f"{limits.header_timeout:g}",
        "--reclaim-interval": f"{limits.reclaim_interval:g}",
        "--max-request-bytes": f"{limits.max_request_bytes // 2**20} MiB",
    }
    shown = {cell.split("`")[1].split()[0]: default.strip() for cell, default in rows}
    assert set() == named - known
    assert defaults == {option: shown[option] for option in defaults}


def test_the_server_reclaims_expired_sessions_periodically_even_after_a_failed_attempt() -> None:
    """reclaim_periodically (started beside uvicorn by serve_http) calls the store's reclaim
    every interval, and goes on after a store that could not be reached."""
    from preflight_fsm.errors import StoreUnavailable
    from preflight_fsm.mcp.http import reclaim_periodically

    calls: list[int] = []
    third = anyio.Event()

    def reclaim() -> int:
        calls.append(len(calls))
        if len(calls) == 1:
            raise StoreUnavailable("the database is restarting")
        if len(calls) == 3:
            anyio.from_thread.run_sync(third.set)
        return 2

    async def main() -> None:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(reclaim_periodically, reclaim, 0.01)
                await third.wait()
                group.cancel_scope.cancel()

    anyio.run(main)
    assert [0, 1, 2] == calls
