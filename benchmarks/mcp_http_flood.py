"""One client flooding new transport sessions against another client's latency (issue 29).

One ``preflight-fsm mcp --transport http`` behind a tokens file serves two principals. The
second client's latency per call (starting a session) is measured alone, then while the first
opens transport sessions (``initialize`` without a session id) as fast as it can; the first is
held to ``--max-sessions-per-client`` and gets 429 beyond it. The figure is the ratio of the
second client's median latencies, flooded over alone.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.mcp import OURS, sdk_missing
from benchmarks.mcp_http import serving
from benchmarks.report import Figure

__all__ = ["flood_figures"]

FLOOD_TARGET = 2.0
"""The second client's p50 latency while flooded over alone."""

_INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}'
)


async def _latencies(url: str, other: str, flooder: str, calls: int) -> dict[str, float]:
    import anyio
    import httpx2 as httpx
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def timed(client: Any) -> float:
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            await client.call_tool("require_clarification", {"user_intention": "Add login"})
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    flood_headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {flooder}",
    }
    sent = 0

    async def flood(http: Any) -> None:
        nonlocal sent
        while True:
            await http.post(url, content=_INITIALIZE, headers=flood_headers)
            sent += 1

    headers = {"Authorization": f"Bearer {other}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        httpx.AsyncClient(timeout=30) as flooding,
    ):
        await timed(client)  # warm up
        alone = await timed(client)
        async with anyio.create_task_group() as group:
            group.start_soon(flood, flooding)
            flooded = await timed(client)
            group.cancel_scope.cancel()
    return {"alone": alone, "flooded": flooded, "sent": float(sent)}


def flood_figures(calls: int) -> list[Figure]:
    """The second client's p50 latency alone and under a flood of new transport sessions."""
    why = sdk_missing()
    if why is not None:
        return [Figure("mcp.http.flood.ratio", None, "x", note=f"skipped: {why}")]
    import anyio

    from preflight_fsm.mcp.tokens import add_token

    with tempfile.TemporaryDirectory(prefix="preflight-fsm-flood-bench-") as tmp:
        work = Path(tmp)
        flooder = add_token(work / "tokens.toml", "flooder")
        other = add_token(work / "tokens.toml", "other")
        command = [str(OURS), "mcp", "--transport", "http", "--port", "{port}"]
        store = ["--store", str(work / "s.sqlite3"), "--tokens", "tokens.toml"]
        with serving([*command, *store], work) as (url, _pid):
            measured = anyio.run(_latencies, url, other, flooder, calls)
    ratio = measured["flooded"] / measured["alone"]
    return [
        Figure(
            "mcp.http.flood.ratio",
            ratio,
            "x",
            target=f"<= {FLOOD_TARGET:.1f} (second client's p50 flooded / alone)",
            ok=ratio <= FLOOD_TARGET,
            note=f"p50 {measured['alone'] * 1e3:.1f} ms alone, {measured['flooded'] * 1e3:.1f} ms "
            f"while another client sent {measured['sent']:.0f} initialize requests",
        )
    ]


if __name__ == "__main__":  # python -m benchmarks.mcp_http_flood
    for figure in flood_figures(30):
        print(figure.name, figure.shown, figure.target, figure.status, figure.note)
