"""``python -m benchmarks.mcp_http_shortcuts``: what the MCP server's collector settings buy.

A server freezes what its start built and collects its youngest generation less often
(``collector.settle_collector_for_serving``, called by ``mcp.server.serve``, D304); it must pay
at least 10 % or go. Two
``preflight-fsm mcp --transport http`` processes on one throw-away ``redis-server``, one as
shipped and one with that function replaced by a no-op, take the same calls from 8 SDK clients,
phase by phase in alternating order, as ``--only http`` runs them. The figures are each
process's CPU per call (schedstat): the median and the mean over the rounds (a full collection
is rare and long: the median round may miss it, the mean counts it), and the median of each
round's ratio (a round's two phases are neighbours in time, so a loaded machine's swings cancel);
and the CPU each server's collections took, per call (``gc.callbacks``, the collecting thread's
clock): the part the settings act on, steadier than the whole on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

from tests.redis_server import throwaway_redis

from benchmarks.mcp_http import _phase, serving
from benchmarks.timing import process_cpu

# Each server adds up the CPU its collections take (from the moment it serves) and writes the
# total to the file its last argument names when it stops. No braces: `serving` formats the code.
CODE = """
import atexit, gc, sys, time
import preflight_fsm.mcp.server as server
spent, started = [0.0], [0.0]
def timed(phase, info):
    if phase == "start":
        started[0] = time.thread_time()
    else:
        spent[0] += time.thread_time() - started[0]
settle = server.settle_collector_for_serving if sys.argv.pop() == "shipped" else (lambda: None)
def serving():
    settle()
    gc.callbacks.append(timed)
server.settle_collector_for_serving = serving
out = sys.argv.pop()
atexit.register(lambda: open(out, "w").write(repr(spent[0])))
sys.argv[0] = "preflight-fsm"
from preflight_fsm.__main__ import main
main()
"""
VARIANTS = ("shipped", "collector as it is")


async def _rounds(servers: dict[str, tuple[str, int]], rounds: int, each: int) -> dict[str, Any]:
    from mcp import Client

    per_call: dict[str, list[float]] = {name: [] for name in servers}
    async with AsyncExitStack() as stack:
        clients = {
            name: [await stack.enter_async_context(Client(url, mode="legacy")) for _ in range(8)]
            for name, (url, _) in servers.items()
        }
        first = 0
        for r in range(rounds + 1):  # round 0 warms up
            for name in list(servers) if r % 2 else list(reversed(servers)):
                pid = servers[name][1]
                before = process_cpu(pid)
                calls = await _phase(clients[name], each, False, first)
                first += 8 * each
                if r:
                    per_call[name].append((process_cpu(pid) - before) / calls)
    return per_call


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--each", type=int, default=3, help="sessions per client per phase")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-http-shortcuts-") as tmp:
        work = Path(tmp)
        with throwaway_redis(work) as redis_url, ExitStack() as stack:
            mcp = ["mcp", "--transport", "http", "--port", "{port}", "--store", redis_url]
            servers = {
                name: stack.enter_context(
                    serving([sys.executable, "-c", CODE, *mcp, str(work / str(i)), name], work)
                )
                for i, name in enumerate(VARIANTS)
            }
            per_call = anyio.run(_rounds, servers, args.rounds, args.each)
        calls = (args.rounds + 1) * 8 * args.each * 3  # the servers have stopped: files written
        collector = {
            name: float((work / str(i)).read_text()) / calls for i, name in enumerate(VARIANTS)
        }
    shipped, other = (per_call[name] for name in VARIANTS)
    ratios = [b / a for a, b in zip(shipped, other, strict=True)]
    for name, values in per_call.items():
        median, mean = statistics.median(values) * 1e3, statistics.mean(values) * 1e3
        print(
            f"{name:20s} server CPU per call: median {median:.3f} ms, mean {mean:.3f} ms; "
            f"the collector's {collector[name] * 1e3:.3f} ms"
        )
    ratio = statistics.median(ratios)
    print(f"collector as it is / shipped, median of the rounds' ratios: {ratio:.3f}")


if __name__ == "__main__":
    main()
