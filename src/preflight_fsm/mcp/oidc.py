"""OAuth 2.1 / OpenID Connect access tokens (``mcp --oidc-issuer URL --oidc-audience AUD``).

The server is a resource server as the MCP authorization specification describes it: it takes
JWT access tokens the team's issuer signed and checks them itself, with joserfc (signature
against the issuer's published keys, ``iss``, ``aud``, ``exp``, ``nbf``, ``iat``, within a clock
skew). The issuer's discovery document is read once at start (an issuer that cannot be reached
stops the server before it listens); its keys are fetched then and refreshed when they age or
when a token names a key not seen yet, at most once per :data:`MIN_REFRESH` seconds, so forged
``kid`` values cannot make the server hammer the issuer. Every fetch is bounded in time and size.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import anyio.to_thread
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from mcp.server.auth.provider import AccessToken

from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.principal import principal_problem

__all__ = ["ALGORITHMS", "IssuerUnavailable", "OidcSettings", "OidcVerifier"]

ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "EdDSA",
)
"""Asymmetric signatures only: a symmetric ``HS256`` token would be signed with a public key."""
MAX_DOCUMENT: Final = 512 * 1024
MAX_KEYS: Final = 64
MAX_TOKEN: Final = 16 * 1024
FETCH_TIMEOUT: Final = 10.0
MIN_REFRESH: Final = 30.0


class IssuerUnavailable(PreflightFsmError):
    """The OpenID issuer's discovery document or keys could not be fetched or read."""

    code: ClassVar[str] = "issuer_unavailable"


@dataclass(frozen=True)
class OidcSettings:
    """The issuer to trust and the audience tokens must name (this server)."""

    issuer: str
    audience: str
    leeway: int = 60
    """Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``."""
    keys_max_age: float = 3600.0
    """Seconds the issuer's keys are used before they are fetched again."""


def _fetch_json(url: str) -> dict[str, Any]:
    """The JSON object at ``url``, bounded in time and size; IssuerUnavailable otherwise."""
    if not url.startswith(("https://", "http://")):
        raise IssuerUnavailable(f"{url!r} is not an http(s) URL")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:
            body = response.read(MAX_DOCUMENT + 1)
    except OSError as exc:
        raise IssuerUnavailable(f"cannot fetch {url}: {exc}") from None
    if len(body) > MAX_DOCUMENT:
        raise IssuerUnavailable(f"{url} answered over {MAX_DOCUMENT} bytes")
    try:
        data = json.loads(body)
    except ValueError:
        raise IssuerUnavailable(f"{url} did not answer JSON") from None
    if not isinstance(data, dict):
        raise IssuerUnavailable(f"{url} did not answer a JSON object")
    return data


class OidcVerifier:
    """The SDK's token verifier for one issuer's JWT access tokens."""

    def __init__(
        self,
        settings: OidcSettings,
        *,
        clock: Callable[[], float] = time.time,
        fetch: Callable[[str], dict[str, Any]] = _fetch_json,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.fetch = fetch
        self._lock = threading.Lock()
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        self.jwks_uri = self._discover()
        self._refresh(force=True)

    def _discover(self) -> str:
        issuer = self.settings.issuer.rstrip("/")
        document = self.fetch(issuer + "/.well-known/openid-configuration")
        if document.get("issuer") != self.settings.issuer:
            raise IssuerUnavailable(
                f"the discovery document of {self.settings.issuer} names the issuer "
                f"{document.get('issuer')!r}: pass exactly that as --oidc-issuer"
            )
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise IssuerUnavailable(f"the discovery document of {issuer} has no jwks_uri")
        return jwks_uri

    def _refresh(self, *, force: bool = False) -> KeySet:
        """The issuer's keys, fetched again when old, or when ``force`` and not just fetched."""
        with self._lock:
            now = time.monotonic()
            age = now - self._fetched_at
            stale = age > self.settings.keys_max_age or (force and age > MIN_REFRESH)
            if self._keys is None or stale:
                document = self.fetch(self.jwks_uri)
                keys = document.get("keys")
                if not isinstance(keys, list) or not 0 < len(keys) <= MAX_KEYS:
                    raise IssuerUnavailable(
                        f"{self.jwks_uri} must hold 1 to {MAX_KEYS} keys under 'keys'"
                    )
                try:
                    self._keys = KeySet.import_key_set({"keys": keys})
                except (JoseError, ValueError, TypeError) as exc:
                    raise IssuerUnavailable(f"{self.jwks_uri}: unusable key ({exc})") from None
                self._fetched_at = now
            return self._keys

    def check(self, token: str) -> dict[str, Any] | None:
        """The token's claims if this issuer signed it for this audience and it is current."""
        if len(token) > MAX_TOKEN:
            return None
        try:
            keys = self._refresh()
            try:
                decoded = jwt.decode(token, keys, algorithms=list(ALGORITHMS))
            except JoseError:  # perhaps a key the issuer rotated in since the last fetch
                decoded = jwt.decode(token, self._refresh(force=True), algorithms=list(ALGORITHMS))
            registry = jwt.JWTClaimsRegistry(
                now=int(self.clock()),
                leeway=self.settings.leeway,
                iss={"essential": True, "value": self.settings.issuer},
                aud={"essential": True, "value": self.settings.audience},
                exp={"essential": True},
                sub={"essential": True},
            )
            registry.validate(decoded.claims)
        except (JoseError, IssuerUnavailable, ValueError, TypeError):
            return None
        claims = decoded.claims
        if principal_problem(claims.get("sub")) is not None:
            return None
        return claims

    async def verify_token(self, token: str) -> AccessToken | None:
        claims = await anyio.to_thread.run_sync(self.check, token)
        if claims is None:
            return None
        subject = claims["sub"]
        scope = claims.get("scope")
        return AccessToken(
            token=token,
            client_id=str(claims.get("azp") or claims.get("client_id") or subject),
            subject=subject,
            scopes=scope.split() if isinstance(scope, str) else [],
            # The SDK refuses a token past expires_at: the clock skew allowed above holds there.
            expires_at=int(claims["exp"]) + self.settings.leeway,
            claims={"iss": claims.get("iss")},
        )
