"""Which origins and hosts the HTTP server answers, on every bind (docs/deploy.md).

The SDK checks Host and Origin only when the server is bound to a loopback address, and then
allows loopback alone, so a server on ``0.0.0.0`` answers any web page a developer visits (DNS
rebinding, cross-site requests) while one behind a proxy that keeps the Host header refuses
every request. Here the check runs whatever the bind: by default the public URL's own origin
and host, and loopback; ``--allowed-origin`` and ``--allowed-host`` add more. A request without
an Origin header (not a browser) is not a cross-site request and passes the Origin check.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["LOOPBACK_NAMES", "OriginCheck", "OriginPolicy", "origin_of", "public_url_problem"]

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
"""Host names of this machine, allowed on any port (what a local client sends)."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def public_url_problem(url: str) -> str | None:
    """Why ``url`` is no URL clients can use (``--public-url``), or None."""
    parts = urlsplit(url)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return "must be an http:// or https:// URL with a host, e.g. https://fsm.team.example/mcp"
    if parts.username or parts.password or parts.query or parts.fragment:
        return "must hold no user, password, query or fragment"
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        return "has a port out of range"
    if _unspecified(parts.hostname):
        return f"names {parts.hostname}, which clients cannot connect to: name this host"
    return None


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased, without a default port."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _host_of(url: str) -> str:
    """The Host header a client of ``url`` sends (``host[:port]``, no default port)."""
    return origin_of(url).split("://", 1)[1]


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, str | None]:
    """``(name, port)`` of a Host header value, lower-cased; port None when absent."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return name + "]", port
    name, colon, port = value.rpartition(":")
    if not colon or not port.isdigit():
        return value, None
    return name, port


@dataclass(frozen=True)
class OriginPolicy:
    """The origins and hosts one server answers (each ``scheme://host[:port]``/``host[:port]``,
    lower-case, default ports dropped); loopback names on any port always."""

    origins: frozenset[str]
    hosts: frozenset[str]

    @classmethod
    def of(
        cls,
        public_url: str | None,
        allowed_origins: Iterable[str] = (),
        allowed_hosts: Iterable[str] = (),
    ) -> OriginPolicy:
        """The policy for a server clients reach at ``public_url`` (None: loopback only)."""
        origins = {origin_of(o) for o in allowed_origins}
        hosts = {h.strip().lower() for h in allowed_hosts}
        if public_url is not None:
            origins.add(origin_of(public_url))
            hosts.add(_host_of(public_url))
        return cls(frozenset(origins), frozenset(hosts))

    def host_allowed(self, host: str) -> bool:
        name, port = _split_host(host)
        if name in LOOPBACK_NAMES:
            return True
        shown = name if port is None else f"{name}:{port}"
        return shown in self.hosts

    def origin_allowed(self, origin: str) -> bool:
        if origin.strip().lower() == "null":
            return False
        shown = origin_of(origin)
        scheme, _, host = shown.partition("://")
        if scheme in _DEFAULT_PORTS and _split_host(host)[0] in LOOPBACK_NAMES:
            return True
        return shown in self.origins


class OriginCheck:
    """ASGI middleware: 421 for a Host, 403 for an Origin the policy does not allow; each
    answer names the option that allows it. Paths in ``unchecked`` pass (``/healthz``: a load
    balancer asks it by the server's address, and its answer drives nothing)."""

    def __init__(
        self, app: ASGIApp, policy: OriginPolicy, unchecked: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.policy = policy
        self.unchecked = unchecked

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.unchecked:
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", ())}
        host = headers.get(b"host", b"").decode("latin-1")
        if not host or not self.policy.host_allowed(host):
            shown = repr(host) if host else "(none)"
            await _refuse(
                send,
                421,
                f"Host {shown} is not served here: add it with --allowed-host HOST, or set "
                "--public-url to the URL clients use",
            )
            return
        origin = headers.get(b"origin")
        if origin is not None:
            text = origin.decode("latin-1")
            if not self.policy.origin_allowed(text):
                await _refuse(
                    send,
                    403,
                    f"Origin {text!r} is not allowed: add it with --allowed-origin ORIGIN, or set "
                    "--public-url to the URL clients use",
                )
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = (message + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
