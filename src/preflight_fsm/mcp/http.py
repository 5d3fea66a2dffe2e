"""Serving over streamable HTTP: the checks in front of ``/mcp``, the bounds, ``/healthz``.

Every request first meets the Origin and Host check (``origins.py``), then the SDK's bearer
authentication when the server has some (``auth.py``), then the per-client bound on transport
sessions (:class:`SessionQuota`), then the SDK's transport. Every size and wait is bounded by
:class:`HttpLimits`, whose defaults are what one team server needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from preflight_fsm.mcp.origins import OriginCheck, OriginPolicy

__all__ = [
    "HEALTH_PATH",
    "HttpLimits",
    "HttpOptions",
    "SessionQuota",
    "http_app",
    "reclaim_periodically",
    "serve_http",
]

HEALTH_PATH: Final = "/healthz"
_SESSION_HEADER: Final = b"mcp-session-id"


@dataclass(frozen=True)
class HttpLimits:
    """How much one server gives its clients (each a ``mcp --transport http`` option)."""

    max_request_bytes: int = 1024 * 1024
    """The largest request body (413 beyond): a tool call is a few kilobytes."""
    max_header_bytes: int = 16 * 1024
    """The largest request head, request line and headers (431/400 beyond)."""
    max_sessions: int = 1000
    """Transport sessions open at once on the server (503 beyond)."""
    max_sessions_per_client: int = 16
    """Transport sessions one principal (or, unauthenticated, one address) keeps open (429)."""
    session_idle_timeout: float = 600.0
    """Seconds a transport session lives without a request."""
    keep_alive_timeout: int = 5
    """Seconds an idle connection is kept open between requests."""
    header_timeout: float = 10.0
    """Seconds a client has to send a whole request head (a slow sender is cut off)."""
    max_connections: int = 256
    """Connections served at once (503 beyond), so slow clients cannot hold every socket."""
    reclaim_interval: float = 60.0
    """Seconds between two reclaims of expired sessions from the store (a bounded batch each)."""


@dataclass(frozen=True)
class HttpOptions:
    """Where and how to serve: the bind, the URL clients use, the checks, the bounds."""

    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    policy: OriginPolicy = field(default_factory=lambda: OriginPolicy.of(None))
    limits: HttpLimits = field(default_factory=HttpLimits)
    health: Callable[[], str | None] | None = None
    """Why the store cannot be reached (None: it can), asked by ``/healthz``."""
    reclaim: Callable[[], int] | None = None
    """Removes one bounded batch of expired sessions from the store (``SessionStore.reclaim``),
    called every ``limits.reclaim_interval`` seconds while the server runs."""


class SessionQuota:
    """At most ``limit`` open transport sessions per client (its principal, else its address).

    Sessions are counted from the server's own answers: one is opened when a request without
    a session id gets one back, closed on DELETE or a 404 for it, and forgotten once idle past
    the transport's own idle timeout (the SDK has ended it by then).
    """

    def __init__(self, app: ASGIApp, limit: int, idle_timeout: float) -> None:
        self.app = app
        self.limit = limit
        self.idle_timeout = idle_timeout
        self._open: dict[str, dict[str, float]] = {}

    def _client(self, scope: Scope) -> str:
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser):
            return "principal:" + (user.access_token.subject or user.username)
        client = scope.get("client")
        return "address:" + (client[0] if client else "?")

    def _live(self, client: str, now: float) -> dict[str, float]:
        sessions = self._open.setdefault(client, {})
        for stale in [s for s, seen in sessions.items() if now - seen > self.idle_timeout + 5]:
            del sessions[stale]
        return sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ()))
        session = headers.get(_SESSION_HEADER, b"").decode("latin-1")
        client = self._client(scope)
        now = time.monotonic()
        sessions = self._live(client, now)
        if session:
            if session in sessions:
                sessions[session] = now
            if scope.get("method") == "DELETE":
                sessions.pop(session, None)
        elif scope.get("method") == "POST" and len(sessions) >= self.limit:
            response = JSONResponse(
                {
                    "error": "too_many_sessions",
                    "error_description": f"this client has {len(sessions)} transport sessions "
                    f"open, the most one client may keep (--max-sessions-per-client "
                    f"{self.limit}): end one (DELETE) or reuse it",
                },
                status_code=429,
                headers={"retry-after": "30"},
            )
            await response(scope, receive, send)
            return

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                answered = dict(message.get("headers", ())).get(_SESSION_HEADER)
                if not session and answered and status < 300:
                    sessions[answered.decode("latin-1")] = time.monotonic()
                elif session and status == 404:
                    sessions.pop(session, None)
            await send(message)

        await self.app(scope, receive, counted)


def http_app(server: MCPServer[Any], options: HttpOptions, path: str) -> ASGIApp:
    """The ASGI application: the SDK's streamable HTTP app behind the checks and bounds."""
    limits = options.limits

    async def health(request: Request) -> Response:
        problem = await anyio.to_thread.run_sync(options.health) if options.health else None
        if problem is None:
            return JSONResponse({"status": "ok", "store": "reachable"})
        return JSONResponse({"status": "unavailable", "store": problem}, status_code=503)

    server.custom_route(HEALTH_PATH, ["GET"], include_in_schema=False)(health)
    app = server.streamable_http_app(
        streamable_http_path=path,
        max_request_body_size=limits.max_request_bytes,
        session_idle_timeout=limits.session_idle_timeout,
        max_sessions=limits.max_sessions,
        # Origin and Host are checked for every bind by OriginCheck below, not only on loopback
        # (where the SDK's own check would refuse a proxy's Host).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=options.host,
    )
    for route in app.routes:
        if isinstance(route, Route) and route.path == path:
            # Behind authentication (the route's app is the SDK's RequireAuthMiddleware, when
            # the server has auth), so the quota knows the principal.
            route.app = SessionQuota(
                route.app, limits.max_sessions_per_client, limits.session_idle_timeout
            )
    return OriginCheck(app, options.policy, frozenset({HEALTH_PATH}))


def _head_timeout_protocol(seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, closing a connection whose request head is not complete within
    ``seconds`` of connecting or of the previous response (uvicorn bounds the idle time between
    requests, not a head sent a byte at a time, which holds a connection slot forever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeoutProtocol(H11Protocol):
        _head_timer: Any = None

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(seconds, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a whole head arrived: the request is being served
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # first: a pipelined request served next disarms it (handle_events)
            super().on_response_complete()

    return HeadTimeoutProtocol


async def reclaim_periodically(reclaim: Callable[[], int], interval: float) -> None:
    """Call ``reclaim`` every ``interval`` seconds, on a worker thread, until cancelled, so a
    server that only reads still removes expired sessions. A store that cannot be reached is
    logged and tried again at the next interval; it never stops the server."""
    import logging

    from preflight_fsm.errors import StoreUnavailable

    log = logging.getLogger("preflight_fsm.reclaim")
    while True:
        await anyio.sleep(interval)
        try:
            removed = await anyio.to_thread.run_sync(reclaim)  # one bounded batch
        except StoreUnavailable as exc:
            log.warning("reclaiming expired sessions failed, tried again in %ss: %s", interval, exc)
        else:
            if removed:
                log.info("reclaimed %d expired sessions", removed)


async def serve_http(
    server: MCPServer[Any],
    options: HttpOptions,
    path: str,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` at ``path`` until stopped; ``announce`` receives the URL once it listens
    (not before: a port in use is reported instead)."""
    import logging

    import uvicorn

    from preflight_fsm.web.app import LinkRedaction

    # The answer page's links are capabilities: never in an access log line.
    logging.getLogger("uvicorn.access").addFilter(LinkRedaction())

    config = uvicorn.Config(
        http_app(server, options, path),
        # h11 (not httptools, whichever is installed): the head size and time bounds are its.
        http=_head_timeout_protocol(options.limits.header_timeout),
        host=options.host,
        port=options.port,
        log_level=server.settings.log_level.lower(),
        limit_concurrency=options.limits.max_connections,
        timeout_keep_alive=options.limits.keep_alive_timeout,
        h11_max_incomplete_event_size=options.limits.max_header_bytes,
    )
    http = uvicorn.Server(config)

    async def announce_when_listening() -> None:
        while not http.started:
            await anyio.sleep(0.02)
        if announce is not None:
            host = options.host
            shown = f"[{host}]" if ":" in host else host
            announce(options.public_url or f"http://{shown}:{options.port}{path}")

    async with anyio.create_task_group() as group:
        group.start_soon(announce_when_listening)
        if options.reclaim is not None:
            group.start_soon(reclaim_periodically, options.reclaim, options.limits.reclaim_interval)
        try:
            await http.serve()
        except SystemExit:
            pass  # uvicorn could not listen (it has logged why); announce was never called
        except KeyboardInterrupt:
            pass  # the Ctrl-C (or a handler's SIGTERM) uvicorn re-raises once it has stopped
        finally:
            group.cancel_scope.cancel()
