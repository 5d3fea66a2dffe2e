"""The floor of the MCP figures: a one-line echo tool on the same SDK, over stdio or HTTP.

``python -m benchmarks.echo_server [--http PORT]``. Its ``require_clarification`` takes the
same arguments as ours and returns them as structured content: what the SDK, its transport and
its JSON-RPC handling cost per call, with no engine and no store behind it.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

__all__ = ["echo_server"]


def echo_server() -> MCPServer[Any]:
    """An MCP server with one tool that returns its arguments."""
    server: MCPServer[Any] = MCPServer("echo", log_level="WARNING")

    @server.tool(name="require_clarification", structured_output=True)
    def echo(
        user_intention: str | None = None,
        session_id: str | None = None,
        answers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        return {"user_intention": user_intention, "session_id": session_id, "answers": answers}

    return server


def main() -> None:
    """Serve the echo tool over stdio, or over streamable HTTP at /mcp with ``--http PORT``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, default=None, help="serve HTTP on this port")
    port = parser.parse_args().http
    server = echo_server()
    if port is None:
        anyio.run(server.run_stdio_async)
    else:
        anyio.run(
            lambda: server.run_streamable_http_async(
                host="127.0.0.1", port=port, streamable_http_path="/mcp"
            )
        )


if __name__ == "__main__":
    main()
