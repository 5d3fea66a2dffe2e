"""Origins and hosts checked on every bind (mcp/origins.py): the rule, then real HTTP requests
against `preflight-fsm mcp --transport http` (and `--preflights`) on loopback and on 127.0.0.2,
an address the SDK's own check leaves open."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from mcp_servers import HttpServer, client_tls, http_server, shared_preflights_server
from preflight_fsm.mcp.origins import OriginPolicy, origin_of, public_url_problem

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(server: HttpServer, **headers: str) -> httpx2.Response:
    """An MCP initialize request to ``server`` with ``headers`` (Host and Origin among them)."""
    return httpx2.post(
        server.url,
        content=json.dumps(INITIALIZE),
        headers={**ACCEPT, **headers},
        timeout=30,
        verify=client_tls(),
    )


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://fsm.team.example/mcp", "https://fsm.team.example"),
        ("https://FSM.team.example:443/mcp", "https://fsm.team.example"),
        ("http://fsm.team.example:8080/mcp", "http://fsm.team.example:8080"),
        ("http://[::1]:8000/mcp", "http://[::1]:8000"),
    ],
)
def test_an_origin_is_scheme_host_and_port_without_the_default_port(url: str, origin: str) -> None:
    assert origin == origin_of(url)


@pytest.mark.parametrize(
    "url", ["ftp://team.example/mcp", "https:///mcp", "http://0.0.0.0:8000/mcp", "http://u@h/mcp"]
)
def test_a_public_url_clients_cannot_use_is_refused(url: str) -> None:
    assert public_url_problem(url) is not None


def test_the_public_urls_origin_and_host_and_loopback_on_any_port_are_allowed() -> None:
    policy = OriginPolicy.of("https://fsm.team.example/mcp")
    assert (True, True, True) == (
        policy.origin_allowed("https://fsm.team.example"),
        policy.host_allowed("fsm.team.example"),
        policy.host_allowed("localhost:9999"),
    )
    assert (False, False, False) == (
        policy.origin_allowed("http://fsm.team.example"),
        policy.origin_allowed("null"),
        policy.host_allowed("fsm.team.example:8443"),
    )


def test_allowed_origins_and_hosts_add_to_the_defaults() -> None:
    policy = OriginPolicy.of(None, ["https://Tools.Example"], ["proxy.internal:8080"])
    assert policy.origin_allowed("https://tools.example")
    assert policy.host_allowed("proxy.internal:8080")
    assert not policy.host_allowed("proxy.internal")


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A server on 127.0.0.2 (not a loopback name the SDK checks), reached as team.example."""
    directory = tmp_path_factory.mktemp("origins")
    extra = ("--public-url", "http://team.example/mcp", "--allowed-origin", "https://ide.example")
    with http_server(
        str(directory / "s.sqlite3"), directory, "origins", *extra, host="127.0.0.2"
    ) as server:
        yield server
    assert "Traceback" not in server.stderr.read_text()


def test_a_foreign_origin_gets_403_naming_the_option_even_off_the_loopback_names(
    elsewhere: HttpServer,
) -> None:
    response = post(elsewhere, Host="team.example", Origin="http://evil.example")
    assert 403 == response.status_code
    assert "--allowed-origin" in response.text


def test_a_foreign_host_gets_421_naming_the_option(elsewhere: HttpServer) -> None:
    response = post(elsewhere, Host="evil.example")
    assert 421 == response.status_code
    assert "--allowed-host" in response.text


def test_the_public_urls_host_and_an_allowed_origin_are_served(elsewhere: HttpServer) -> None:
    response = post(elsewhere, Host="team.example", Origin="https://ide.example")
    assert 200 == response.status_code


def test_a_proxy_that_keeps_the_host_reaches_a_loopback_server_that_allows_it(
    tmp_path: Path,
) -> None:
    extra = ("--public-url", "https://fsm.team.example/mcp")
    with http_server(str(tmp_path / "s.sqlite3"), tmp_path, "proxied", *extra) as server:
        served = post(server, Host="fsm.team.example", Origin="https://fsm.team.example")
        refused = post(server, Host="other.example")
    assert (200, 421) == (served.status_code, refused.status_code)


def test_the_preflights_server_checks_origins_too(tmp_path: Path) -> None:
    with shared_preflights_server(tmp_path) as server:
        response = post(server, Origin="http://evil.example")
    assert 403 == response.status_code
