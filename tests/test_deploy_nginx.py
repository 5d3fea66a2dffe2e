"""docs/deploy.md's reverse-proxy recipe against a real nginx (in the foreground, its
configuration in a temporary directory, on 127.0.0.1 ports): the proxy keeps the Host, the
server allows it through --public-url, an agent behind the proxy is served with its token, and
a page on another origin is refused through the proxy."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import HttpServer, call, client_tls, connect_http, free_port, http_server
from preflight_fsm.mcp.tokens import add_token
from test_mcp_enroll import enrolled_through, signed_turn
from test_mcp_web import type_of

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DEPLOY = Path(__file__).resolve().parent.parent / "docs" / "deploy.md"


def recipe_location() -> str:
    """The `location / { ... }` block of docs/deploy.md's nginx recipe, as documented."""
    text = DEPLOY.read_text()
    block = text.split("```nginx\n", 1)[1].split("```", 1)[0]
    found = re.search(r"    location / \{\n.*?\n    \}\n", block, re.S)
    assert found is not None, "docs/deploy.md's nginx recipe has no location / block"
    return found.group(0)


@contextmanager
def nginx_in_front(directory: Path, upstream: str, port: int, name: str) -> Iterator[None]:
    """nginx on 127.0.0.1:``port`` as server ``name``, forwarding to ``upstream`` with the
    recipe's location block, for the block."""
    location = recipe_location().replace("http://127.0.0.1:8765", upstream)
    conf = directory / "nginx.conf"
    conf.write_text(
        f"""daemon off;
master_process off;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name {name};
        client_max_body_size 1m;
{location}    }}
}}
"""
    )
    nginx = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and nginx.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        assert nginx.poll() is None, (directory / "error.log").read_text()
        yield
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, HttpServer, str]]:
    """(the proxy's URL, the server behind it, a token): nginx forwarding to the server."""
    directory = tmp_path_factory.mktemp("nginx")
    tokens = directory / "tokens.toml"
    token = add_token(tokens, "alice")
    proxy_port = free_port()
    public = f"http://fsm.localhost:{proxy_port}/mcp"
    extra = ("--tokens", str(tokens), "--public-url", public)
    with (
        http_server(str(directory / "s.sqlite3"), directory, "behind", *extra) as server,
        nginx_in_front(directory, server.url.removesuffix("/mcp"), proxy_port, "fsm.localhost"),
    ):
        yield f"http://127.0.0.1:{proxy_port}/mcp", server, token


def test_a_person_enrolls_on_the_proxys_origin_and_signs_a_turn_through_it(
    browser: WebDriver, tmp_path: Path
) -> None:
    """The team recipe with passkeys (docs/deploy.md): `--enroll` behind nginx prints a link
    at the proxy's origin; Ada enrolls through nginx and a turn is signed through it."""
    port = free_port()

    def front(server: HttpServer) -> AbstractContextManager[None]:
        return nginx_in_front(tmp_path, server.url.removesuffix("/mcp"), port, "localhost")

    with enrolled_through(browser, tmp_path, public_port=port, front=front):
        then = signed_turn(browser, f"http://localhost:{port}/mcp")
    assert ("completed", ("MySQL", "user_passkey")) == (then["status"], type_of(then))


def test_an_agent_behind_nginx_is_served_with_its_token(
    proxied: tuple[str, HttpServer, str],
) -> None:
    url, _, token = proxied

    async def run() -> dict[str, object]:
        async with connect_http(url, token=token) as client:
            return await call(client, "require_clarification", user_intention="Add OAuth login")

    assert "needs_clarification" == anyio.run(run)["status"]


def test_the_public_host_kept_by_the_proxy_is_served(
    proxied: tuple[str, HttpServer, str],
) -> None:
    url, _, token = proxied
    port = url.split(":")[2].split("/")[0]
    headers = {"Authorization": f"Bearer {token}", "Host": f"fsm.localhost:{port}"}
    health = httpx2.get(
        url.replace("/mcp", "/healthz"), headers=headers, timeout=30, verify=client_tls()
    )
    assert 200 == health.status_code


def test_another_origin_is_refused_through_the_proxy(
    proxied: tuple[str, HttpServer, str],
) -> None:
    url, _, token = proxied
    headers = {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
    response = httpx2.post(url, content=b"{}", headers=headers, timeout=30, verify=client_tls())
    assert 403 == response.status_code


def test_a_host_the_server_does_not_serve_is_refused_through_the_proxy(
    proxied: tuple[str, HttpServer, str],
) -> None:
    url, _, token = proxied
    headers = {"Host": "evil.example", "Authorization": f"Bearer {token}"}
    response = httpx2.post(url, content=b"{}", headers=headers, timeout=30, verify=client_tls())
    assert 421 == response.status_code
