"""preflight-fsm as an MCP server: the clarification service AI agents call (``docs/mcp.md``).

Needs the ``mcp`` extra (the official SDK, 2.x). :func:`build_server` makes the server over a
:class:`~preflight_fsm.store.Sessions`; :func:`serve` runs it over stdio or streamable HTTP.
"""

from preflight_fsm.mcp.server import DIAGRAM_URI, HTTP_PATH, SERVER_NAME, build_server, serve

__all__ = ["DIAGRAM_URI", "HTTP_PATH", "SERVER_NAME", "build_server", "serve"]
