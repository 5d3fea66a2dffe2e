"""OpenID Connect access tokens (mcp/oidc.py) against a local issuer run on 127.0.0.1 by the test
(discovery document and JWKS over real HTTP), then a real server behind it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

from mcp_servers import HttpServer, call, client_tls, connect_http, http_server
from preflight_fsm.mcp.oidc import IssuerUnavailable, OidcSettings, OidcVerifier

AUDIENCE = "preflight-fsm-test"
NOW = 1_800_000_000


@dataclass
class Issuer:
    """A local OpenID issuer: its URL, its signing key, and how often its keys were fetched."""

    url: str
    key: RSAKey
    fetches: list[str]

    def token(self, key: RSAKey | None = None, **claims: Any) -> str:
        payload = {"iss": self.url, "aud": AUDIENCE, "sub": "dana", "exp": NOW + 300, **claims}
        signer = key or self.key
        return jwt.encode({"alg": "RS256", "kid": signer.kid}, payload, signer)


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    fetches: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetches.append(self.path)
            base = f"http://127.0.0.1:{self.server.server_port}"  # type: ignore[attr-defined]
            documents = {
                "/.well-known/openid-configuration": {"issuer": base, "jwks_uri": base + "/jwks"},
                "/jwks": {"keys": [key.as_dict(private=False)]},
            }
            body = json.dumps(documents.get(self.path, {})).encode()
            self.send_response(200 if self.path in documents else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Issuer(f"http://127.0.0.1:{server.server_address[1]}", key, fetches)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def verifier(issuer: Issuer) -> OidcVerifier:
    return OidcVerifier(OidcSettings(issuer.url, AUDIENCE, leeway=60), clock=lambda: NOW)


def test_a_token_the_issuer_signed_for_this_audience_is_accepted(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    claims = verifier.check(issuer.token())
    assert "dana" == (claims or {}).get("sub")


def test_a_token_expired_within_the_clock_skew_is_accepted(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    assert verifier.check(issuer.token(exp=NOW - 30)) is not None


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": NOW - 120},
        {"aud": "another-service"},
        {"iss": "http://127.0.0.1:1"},
        {"sub": "dana\u202e"},
        {"nbf": NOW + 600},
    ],
    ids=["expired", "wrong audience", "wrong issuer", "deceptive subject", "not yet valid"],
)
def test_a_token_with_a_wrong_claim_is_refused(
    issuer: Issuer, verifier: OidcVerifier, claims: dict[str, Any]
) -> None:
    assert verifier.check(issuer.token(**claims)) is None


def test_a_token_signed_by_another_key_under_the_issuers_key_id_is_refused(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    forged = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    assert verifier.check(issuer.token(key=forged)) is None


def test_a_symmetric_token_keyed_with_the_public_key_is_refused(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    public = json.dumps(issuer.key.as_dict(private=False)).encode()
    claims = {"iss": issuer.url, "aud": AUDIENCE, "sub": "eve", "exp": NOW + 300}
    token = jwt.encode({"alg": "HS256", "kid": "k1"}, claims, OctKey.import_key(public))
    assert verifier.check(token) is None


def test_unknown_key_ids_refetch_the_keys_at_most_once_per_interval(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    before = issuer.fetches.count("/jwks")
    for kid in ("x1", "x2", "x3"):
        verifier.check(issuer.token(key=RSAKey.generate_key(2048, parameters={"kid": kid})))
    assert before == issuer.fetches.count("/jwks")


def test_an_issuer_that_names_another_issuer_is_refused_at_start(issuer: Issuer) -> None:
    with pytest.raises(IssuerUnavailable, match="--oidc-issuer"):
        OidcVerifier(OidcSettings(issuer.url + "/", AUDIENCE))


@pytest.fixture(scope="module")
def protected(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    directory = tmp_path_factory.mktemp("oidc")
    extra = ("--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE)
    with http_server(str(directory / "s.sqlite3"), directory, "oidc", *extra) as server:
        yield server
    assert "Traceback" not in server.stderr.read_text()


def test_a_401_points_at_the_protected_resource_metadata_which_names_the_issuer(
    issuer: Issuer, protected: HttpServer
) -> None:
    refused = httpx2.post(protected.url, content=b"{}", timeout=30, verify=client_tls())
    challenge = refused.headers["www-authenticate"]
    metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
    metadata = httpx2.get(metadata_url, timeout=30, verify=client_tls()).json()
    assert (401, [issuer.url]) == (refused.status_code, metadata["authorization_servers"])


def test_a_current_token_is_served_and_its_subject_answers(
    issuer: Issuer, protected: HttpServer
) -> None:
    now = int(time.time())
    token = issuer.token(exp=now + 300, iat=now)

    async def run() -> dict[str, Any]:
        async with connect_http(protected.url, token=token) as client:
            return await call(client, "require_clarification", user_intention="Add OAuth login")

    assert "needs_clarification" == anyio.run(run)["status"]


def test_an_expired_token_gets_401_and_runs_nothing(issuer: Issuer, protected: HttpServer) -> None:
    token = issuer.token(exp=int(time.time()) - 3600)
    response = httpx2.post(
        protected.url,
        content=b"{}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
        verify=client_tls(),
    )
    assert 401 == response.status_code


def test_a_server_whose_issuer_cannot_be_reached_does_not_start(tmp_path: Path) -> None:
    import subprocess

    from mcp_servers import PREFLIGHT_FSM

    done = subprocess.run(
        [
            PREFLIGHT_FSM,
            "mcp",
            "--transport",
            "http",
            "--store",
            str(tmp_path / "s.sqlite3"),
            "--oidc-issuer",
            "http://127.0.0.1:1",
            "--port",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert 2 == done.returncode
    assert "--oidc-issuer" in done.stderr
