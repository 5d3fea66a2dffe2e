"""Per-call round trip of the MCP server over stdio, beside its floor and its peer.

One client (the SDK 2.x ``Client`` of this environment, handshake-era mode, as Preflights'
server speaks nothing newer) drives whole sessions on three servers, interleaved round by round
(who goes first rotates): ``preflight-fsm mcp`` on its default SQLite store (durable); the floor,
a one-line echo tool on the same SDK (``benchmarks/echo_server.py``) given the same calls; and the
peer, ``preflights-mcp`` (in-memory sessions), which crashes on the 2.x SDK and so runs from its
own environment, ``.venv-preflights-mcp`` (``preflights==1.1.4``, ``mcp==1.25.0``, the version of
its lock file; ``make bench`` creates it). Every ``require_clarification`` call is timed from the
client's send to its parsed and schema-validated result; the figures are the p50 and p99 of those
calls. The servers' own CPU per call is read from the kernel (``/proc/<pid>/task/*/schedstat``),
and the client's (this process's CPU while it drives one server) beside it: the client parses
every result and checks it against the tool's published output schema, with jsonschema, on the
round trip's path.

Preflights' server answers the same intentions with the questions its own mock asks, driven by
the same choices; it asks more calls per session (``allowlist_paths``/``acceptance_criteria``),
writes its ADR files at the end (a fresh repository per session: it names every ADR alike), and
ends every two-phase session in its own ``UNKNOWN_FIELD`` error (its mock invents a
``Description`` field), which the figures note.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.report import Figure
from benchmarks.timing import child_pid, process_cpu

__all__ = ["PREFLIGHTS_VENV", "mcp_figures", "sdk_missing"]

ROOT = Path(__file__).resolve().parent.parent
PREFLIGHTS_VENV = ROOT / ".venv-preflights-mcp"
OURS = Path(sys.executable).parent / "preflight-fsm"
THEIRS = PREFLIGHTS_VENV / "bin" / "preflights-mcp"
TARGET = 1.4
"""Ours over the echo tool, p50 per call (issue 32; 1.2 before it)."""


@dataclass(frozen=True)
class McpScenario:
    """One session: the intention, our answers per call, and the choices Preflights' asks for."""

    name: str
    intention: str
    ours: tuple[dict[str, str], ...]
    patch: dict[str, Any] | None
    theirs_first: dict[str, str]
    theirs_later: dict[str, str] = field(
        default_factory=lambda: {
            "auth_library": "passport",
            "allowlist_paths": "src/",
            "acceptance_criteria": "the tests pass",
        }
    )


SCENARIOS = (
    McpScenario(
        "shortcut",
        "Add OAuth login to the admin dashboard",
        ({"auth_strategy": "OAuth"},),
        {"category": "Authentication", "fields": [{"name": "Strategy", "value": "OAuth"}]},
        {"auth_library": "passport"},
    ),
    McpScenario(
        "two_phase",
        "Speed up the checkout page",
        ({"change_category": "Database"}, {"db_type": "PostgreSQL"}),
        {"category": "Database", "fields": [{"name": "Type", "value": "PostgreSQL"}]},
        {"category": "Database", "description": "PostgreSQL"},
    ),
    McpScenario(
        "other",
        "Speed up the checkout page",
        ({"change_category": "Other (specify)"}, {"change_category__other": "Payments"}),
        None,  # category Other, Description = the intention (it varies per session)
        {"category": "Other (specify)", "category__other": "Other", "description": "Payments"},
    ),
)


def sdk_missing() -> str | None:
    """Why our MCP server cannot be measured here, or None."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return "the mcp SDK is not installed (pip install 'preflight-fsm[mcp]')"
    if not OURS.exists():
        return "the preflight-fsm command is not installed"
    return None


def _peer_missing() -> str | None:
    if THEIRS.exists():
        return None
    return (
        f"{PREFLIGHTS_VENV.name} is missing: `make bench` creates it "
        "(preflights==1.1.4 with mcp==1.25.0)"
    )


class _Timer:
    """Times each tool call of one server."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.samples: list[float] = []
        self.calls = 0

    async def call(self, arguments: dict[str, Any], timed: bool) -> dict[str, Any]:
        start = time.perf_counter()
        result = await self.client.call_tool("require_clarification", arguments)
        elapsed = time.perf_counter() - start
        if timed:
            self.samples.append(elapsed)
            self.calls += 1
        if result.structured_content is not None:
            return dict(result.structured_content)
        return dict(json.loads(result.content[0].text))


async def _ours(timer: _Timer, scenario: McpScenario, k: int, timed: bool) -> None:
    intention = f"{scenario.intention} (ticket {k})"
    result = await timer.call({"user_intention": intention}, timed)
    session_id = result["session_id"]
    for answers in scenario.ours:
        arguments = {"user_intention": intention, "session_id": session_id, "answers": answers}
        result = await timer.call(arguments, timed)
    expected = scenario.patch or {
        "category": "Other",
        "fields": [{"name": "Description", "value": intention}],
    }
    if result.get("status") != "completed" or result.get("patch") != expected:
        raise AssertionError(f"our {scenario.name} session did not complete as expected: {result}")


async def _echo(timer: _Timer, scenario: McpScenario, k: int, timed: bool) -> None:
    """The same calls as ours, to the echo tool (it keeps no session: any id will do)."""
    intention = f"{scenario.intention} (ticket {k})"
    result = await timer.call({"user_intention": intention}, timed)
    if result.get("user_intention") != intention:
        raise AssertionError(f"the echo tool did not echo: {result}")
    for answers in scenario.ours:
        arguments = {"user_intention": intention, "session_id": "echo", "answers": answers}
        await timer.call(arguments, timed)


async def _theirs(timer: _Timer, scenario: McpScenario, k: int, timed: bool) -> str:
    intention = f"{scenario.intention} (ticket {k})"
    repo = tempfile.mkdtemp(prefix="pf-repo-", dir=os.environ.get("PF_BENCH_REPOS"))
    os.mkdir(os.path.join(repo, ".git"))  # all its repository discovery looks for
    base = {"user_intention": intention, "repo_path": repo}
    result = await timer.call(base, timed)
    session_id = result["session_id"]
    answers: dict[str, str] = dict(scenario.theirs_first)
    for _ in range(6):  # bounded: its sessions end within three answered calls
        result = await timer.call({**base, "session_id": session_id, "answers": answers}, timed)
        if result.get("status") != "needs_clarification" or not result.get("questions"):
            break
        answers = {q["id"]: scenario.theirs_later.get(q["id"], "x") for q in result["questions"]}
    status = str(result.get("status"))
    if status == "error":
        status += ":" + str(result.get("error", {}).get("code"))
    return status


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


_Driver = Callable[[_Timer, McpScenario, int, bool], Any]


async def _run(rounds: int, per_round: int, peer: bool) -> dict[str, Any]:
    """``rounds`` rounds; in each, every server runs ``per_round`` sessions of each scenario."""
    from mcp import Client, StdioServerParameters

    with tempfile.TemporaryDirectory(prefix="preflight-fsm-mcp-bench-") as tmp:
        ours_dir, repos = Path(tmp) / "ours", Path(tmp) / "repos"
        ours_dir.mkdir()
        repos.mkdir()
        os.environ["PF_BENCH_REPOS"] = str(repos)
        servers = {
            "ours": StdioServerParameters(command=str(OURS), args=["mcp"], cwd=str(ours_dir)),
            "echo": StdioServerParameters(
                command=sys.executable, args=["-m", "benchmarks.echo_server"], cwd=str(ROOT)
            ),
        }
        if peer:
            servers["preflights"] = StdioServerParameters(
                command=str(THEIRS), args=[], cwd=str(repos)
            )
        markers = {"ours": "preflight-fsm mcp", "echo": "benchmarks.echo_server"}
        markers["preflights"] = "preflights-mcp"
        drivers: dict[str, _Driver] = {"ours": _ours, "echo": _echo, "preflights": _theirs}
        async with AsyncExitStack() as stack:
            timers: dict[str, _Timer] = {}
            pids: dict[str, int] = {}
            for name, params in servers.items():
                client = await stack.enter_async_context(Client(params, mode="legacy"))
                timers[name] = _Timer(client)
                pids[name] = child_pid(markers[name])
            cpu = dict.fromkeys(servers, 0.0)
            client_cpu = dict.fromkeys(servers, 0.0)
            endings: set[str] = set()
            k = 0
            for r in range(rounds + 1):  # round 0 warms up (untimed)
                names = list(servers)
                names = names[r % len(names) :] + names[: r % len(names)]
                for name in names:
                    before, client_before = process_cpu(pids[name]), time.process_time()
                    for scenario in SCENARIOS:
                        for _ in range(per_round):
                            k += 1
                            ended = await drivers[name](timers[name], scenario, k, r > 0)
                            if name == "preflights":
                                endings.add(f"{scenario.name}: {ended}")
                    if r > 0:
                        cpu[name] += process_cpu(pids[name]) - before
                        client_cpu[name] += time.process_time() - client_before
        if not (ours_dir / ".preflight-fsm" / "sessions.sqlite3").exists():
            raise AssertionError("our server did not use the CLI's default SQLite store")
    samples = {name: timer.samples for name, timer in timers.items()}
    calls = {name: max(1, timers[name].calls) for name in servers}
    return {
        "samples": samples,
        "cpu": {name: cpu[name] / calls[name] for name in servers},
        "client_cpu": {name: client_cpu[name] / calls[name] for name in servers},
        "endings": sorted(endings),
    }


def _skipped(why: str) -> list[Figure]:
    return [Figure(name, None, unit, note=f"skipped: {why}") for name, unit in _NAMES]


_NAMES = (
    ("mcp.stdio.echo.p50", "ms"),
    ("mcp.stdio.ours.p50", "ms"),
    ("mcp.stdio.ours.p99", "ms"),
    ("mcp.stdio.ratio", "x"),
    ("mcp.stdio.preflights.p50", "ms"),
    ("mcp.stdio.preflights.ratio", "x"),
    ("mcp.stdio.ours.server_cpu", "ms"),
    ("mcp.stdio.ours.client_cpu", "ms"),
)


def mcp_figures(rounds: int, per_round: int) -> list[Figure]:
    """p50 per call of ours beside the echo tool (target) and Preflights' server (peer)."""
    why = sdk_missing()
    if why is not None:
        return _skipped(why)
    import anyio

    peer_missing = _peer_missing()
    runner: Callable[[], Any] = lambda: _run(rounds, per_round, peer_missing is None)  # noqa: E731
    measured = anyio.run(runner)
    s, cpu, client_cpu = measured["samples"], measured["cpu"], measured["client_cpu"]
    ours, echo = statistics.median(s["ours"]) * 1e3, statistics.median(s["echo"]) * 1e3
    ratio = ours / echo
    calls = f"{len(s['ours'])} calls, {rounds} rounds"
    figures = [
        Figure(
            "mcp.stdio.echo.p50",
            echo,
            "ms",
            note=f"floor: a one-line echo tool on the same SDK; server CPU "
            f"{cpu['echo'] * 1e3:.2f} ms per call",
        ),
        Figure("mcp.stdio.ours.p50", ours, "ms", note=f"preflight-fsm mcp, SQLite; {calls}"),
        Figure("mcp.stdio.ours.p99", _percentile(s["ours"], 0.99) * 1e3, "ms"),
        Figure(
            "mcp.stdio.ratio",
            ratio,
            "x",
            target=f"<= {TARGET:.2f} (ours / echo, p50 per call)",
            ok=ratio <= TARGET,
        ),
        Figure(
            "mcp.stdio.ours.server_cpu",
            cpu["ours"] * 1e3,
            "ms",
            note=f"per call; the echo server's {cpu['echo'] * 1e3:.2f} ms",
        ),
        Figure(
            "mcp.stdio.ours.client_cpu",
            client_cpu["ours"] * 1e3,
            "ms",
            note="the client's per call: parsing our result and checking it against the "
            f"published output schema; on the echo's {client_cpu['echo'] * 1e3:.2f} ms",
        ),
    ]
    if peer_missing is not None:
        figures += [
            Figure(name, None, unit, note=f"skipped: {peer_missing}")
            for name, unit in _NAMES
            if name.startswith("mcp.stdio.preflights")
        ]
        return figures
    theirs = statistics.median(s["preflights"]) * 1e3
    figures += [
        Figure(
            "mcp.stdio.preflights.p50",
            theirs,
            "ms",
            note=f"peer: preflights-mcp 1.1.4, in memory; {len(s['preflights'])} calls; "
            + "; ".join(measured["endings"]),
        ),
        Figure("mcp.stdio.preflights.ratio", ours / theirs, "x", note="ours / Preflights"),
    ]
    return figures
