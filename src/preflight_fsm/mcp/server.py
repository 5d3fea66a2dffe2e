"""Building the MCP server (:func:`build_server`) and running it (:func:`serve`).

The two are apart so another builder (``preflight_fsm.integrations.preflights.agent_tools``, with
Preflights' own tool shapes) can be served the same way: ``serve(build_...(...), "stdio")``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError

from preflight_fsm import Flow, __version__, default_flow
from preflight_fsm.mcp.auth import ServerAuth
from preflight_fsm.mcp.errors import failed
from preflight_fsm.mcp.page_rounds import PageRounds
from preflight_fsm.mcp.policy import AnswersFrom, policy_note
from preflight_fsm.mcp.request_state import RoundSealer
from preflight_fsm.mcp.results import tool_result
from preflight_fsm.mcp.tools import GET_SESSION, REQUIRE_CLARIFICATION, ClarificationTools
from preflight_fsm.store import Sessions

if TYPE_CHECKING:
    from preflight_fsm.mcp.http import HttpOptions

__all__ = [
    "DIAGRAM_URI",
    "HTTP_PATH",
    "SERVER_NAME",
    "Transport",
    "build_server",
    "serve",
]

SERVER_NAME: Final = "preflight-fsm"
HTTP_PATH: Final = "/mcp"
DIAGRAM_URI: Final = "preflight-fsm://flow/diagram.mmd"
"""The flow's Mermaid state diagram, as an MCP resource."""

Transport = Literal["stdio", "http"]

INSTRUCTIONS = (
    "preflight-fsm asks the user one or two short clarification questions before code is "
    "written, and returns the decision (category and fields). Call require_clarification with "
    "the user's intention before implementing a change whose approach is not settled; ask the "
    "user the questions it returns and call it again with session_id and answers until the "
    "status is completed or stopped. Sessions are stored: they survive restarts."
)


def flow_mermaid(flow: Flow) -> str:
    """The flow's Mermaid diagram: the one place this package calls the diagram renderer."""
    from preflight_fsm.diagrams import flow_graph, to_mermaid

    return to_mermaid(flow_graph(flow))


def build_server(
    sessions: Sessions,
    *,
    request_state_keys: Sequence[bytes] = (),
    answers_from: AnswersFrom = "any",
    auth: ServerAuth | None = None,
    page: PageRounds | None = None,
) -> MCPServer[Any]:
    """The MCP server over ``sessions``: two tools and the flow diagram resource.

    ``request_state_keys`` (each at least 32 bytes; the first seals, any opens) let
    elicitation rounds of 2026-07-28 clients survive a restart or continue on another server;
    without them each process seals with a random key of its own. ``answers_from`` is the
    policy (``policy.py``): ``user`` takes answers only through forms, ``web`` only on the page,
    ``person`` only on the page signed with a passkey (``page`` is then a signed page).
    ``auth`` (HTTP only) authenticates every request and gives each session an owner
    (``auth.py``). ``page`` is the answer page (``page_rounds.py``): its routes are served
    beside ``/mcp`` over HTTP, and under ``web`` and ``person`` it collects every round.
    """
    keys = tuple(request_state_keys)
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS + policy_note(answers_from),
        log_level="WARNING",
        request_state_security=RequestStateSecurity(keys=keys) if keys else None,
        auth=auth.settings if auth else None,
        token_verifier=auth.verifier if auth else None,
    )
    # Outermost, so the SDK's own refusal of a tampered state becomes an error result (below).
    server.middleware.insert(0, _refused_state_as_result)
    tools = ClarificationTools(
        sessions, RoundSealer(keys), answers_from, auth.teams if auth else None, page
    )
    if page is not None:
        from preflight_fsm.web import page_routes

        for route in page_routes(page.page):
            methods = sorted((route.methods or {"GET"}) - {"HEAD"})
            server.custom_route(route.path, methods, include_in_schema=False)(route.endpoint)
    server.add_tool(
        tools.require_clarification,
        name="require_clarification",
        title="Clarify before coding",
        description=REQUIRE_CLARIFICATION + policy_note(answers_from),
    )
    server.add_tool(
        tools.get_session, name="get_session", title="Show a session", description=GET_SESSION
    )
    flow = sessions.flow or default_flow()

    @server.resource(
        DIAGRAM_URI,
        name="flow-diagram",
        title="Clarification flow",
        description="The flow every session moves through, as a Mermaid state diagram "
        "(generated from the machine the server runs).",
        mime_type="text/vnd.mermaid",
    )
    def flow_diagram() -> str:  # rendered when read: the renderer's imports stay off the start
        return flow_mermaid(flow)

    return server


async def _refused_state_as_result(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """A ``tools/call`` whose request state the SDK refused gets an ``error`` result.

    The SDK answers a changed, expired or foreign state with a protocol error; the issue asks
    for a result an agent can act on, with nothing changed (the tool never ran).
    """
    try:
        return await call_next(ctx)
    except MCPError as error:
        data = error.error.data
        refused = isinstance(data, dict) and data.get("reason") == "invalid_request_state"
        if ctx.method != "tools/call" or not refused:
            raise
        arguments = (ctx.params or {}).get("arguments") or {}
        session_id = arguments.get("session_id") if isinstance(arguments, dict) else None
        result = failed(
            "invalid_request_state",
            "the request state sent back was refused (changed, expired, or minted by another "
            "server); nothing was changed",
            session_id=session_id if isinstance(session_id, str) else None,
        )
        return tool_result(result)


def serve(
    server: MCPServer[Any],
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    announce: Callable[[str], None] | None = None,
    *,
    options: HttpOptions | None = None,
) -> None:
    """Run ``server`` until its input ends (stdio) or it is stopped (HTTP at ``/mcp``, on
    ``host:port``, or as ``options`` say: the URL clients use, origins, bounds; ``http.py``).

    Over HTTP, ``announce`` receives the URL once the server listens on it (not before: a port
    in use is reported instead).
    """
    if transport == "stdio":
        from preflight_fsm.mcp.stdio import run_stdio

        anyio.run(run_stdio, server)
    elif transport == "http":
        from preflight_fsm.mcp.http import HttpOptions, serve_http

        chosen = options or HttpOptions(host=host, port=port)
        anyio.run(serve_http, server, chosen, HTTP_PATH, announce)
    else:
        raise ValueError(f"unknown transport {transport!r}: 'stdio' or 'http'")
