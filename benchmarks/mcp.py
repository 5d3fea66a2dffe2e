"""Per-call round trip of the MCP servers over stdio, ours against Preflights 1.1.4's own.

One client (the SDK 2.x ``Client`` of this environment, handshake-era mode, as Preflights'
server speaks nothing newer) drives whole sessions on both servers, interleaved session by
session: ``preflight-fsm mcp`` on its default SQLite store (durable) and ``preflights-mcp``
(in-memory sessions), which crashes on the 2.x SDK and so runs from its own environment,
``.venv-preflights-mcp`` (``preflights==1.1.4``, ``mcp==1.25.0``, the version of its lock file;
``make bench`` creates it). Every ``require_clarification`` call is timed from the client's
send to its parsed result; the figures are the p50 and p99 of those calls per scenario.

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

__all__ = ["PREFLIGHTS_VENV", "mcp_figures"]

ROOT = Path(__file__).resolve().parent.parent
PREFLIGHTS_VENV = ROOT / ".venv-preflights-mcp"
OURS = Path(sys.executable).parent / "preflight-fsm"
THEIRS = PREFLIGHTS_VENV / "bin" / "preflights-mcp"


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


def _missing() -> str | None:
    """Why the side-by-side cannot run here, or None."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return "the mcp SDK is not installed (pip install 'preflight-fsm[mcp]')"
    if not OURS.exists():
        return "the preflight-fsm command is not installed"
    if not THEIRS.exists():
        return (
            f"{PREFLIGHTS_VENV.name} is missing: `make bench` creates it "
            "(preflights==1.1.4 with mcp==1.25.0)"
        )
    return None


class _Timer:
    """Times each tool call of one server."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.samples: list[float] = []

    async def call(self, arguments: dict[str, Any], timed: bool) -> dict[str, Any]:
        start = time.perf_counter()
        result = await self.client.call_tool("require_clarification", arguments)
        elapsed = time.perf_counter() - start
        if timed:
            self.samples.append(elapsed)
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


async def _run(sessions: int, warmup: int) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    with tempfile.TemporaryDirectory(prefix="preflight-fsm-mcp-bench-") as tmp:
        ours_dir, repos = Path(tmp) / "ours", Path(tmp) / "repos"
        ours_dir.mkdir()
        repos.mkdir()
        os.environ["PF_BENCH_REPOS"] = str(repos)
        ours_legacy = StdioServerParameters(command=str(OURS), args=["mcp"], cwd=str(ours_dir))
        theirs = StdioServerParameters(command=str(THEIRS), args=[], cwd=str(repos))
        async with AsyncExitStack() as stack:
            ours_client = await stack.enter_async_context(Client(ours_legacy, mode="legacy"))
            modern_client = await stack.enter_async_context(Client(ours_legacy, mode="auto"))
            their_client = await stack.enter_async_context(Client(theirs, mode="legacy"))
            samples: dict[str, dict[str, list[float]]] = {}
            endings: dict[str, set[str]] = {}
            k = 0
            for scenario in SCENARIOS:
                mine, modern, yours = (
                    _Timer(ours_client),
                    _Timer(modern_client),
                    _Timer(their_client),
                )
                ends: set[str] = set()
                for i in range(warmup + sessions):
                    timed = i >= warmup
                    k += 1
                    # Alternate who goes first, so neither always follows the other's I/O.
                    if i % 2:
                        await _ours(mine, scenario, k, timed)
                        ends.add(await _theirs(yours, scenario, k, timed))
                    else:
                        ends.add(await _theirs(yours, scenario, k, timed))
                        await _ours(mine, scenario, k, timed)
                    await _ours(modern, scenario, k, timed)
                samples[scenario.name] = {
                    "ours": mine.samples,
                    "ours_2026": modern.samples,
                    "preflights": yours.samples,
                }
                endings[scenario.name] = ends
        durable = (ours_dir / ".preflight-fsm" / "sessions.sqlite3").exists()
    if not durable:
        raise AssertionError("our server did not use the CLI's default SQLite store")
    return {"samples": samples, "endings": endings}


def _skipped(why: str) -> list[Figure]:
    figures = []
    for scenario in SCENARIOS:
        for name in ("ours.p50", "ours.p99", "preflights.p50", "preflights.p99", "p50_ratio"):
            figure = Figure(f"mcp.{scenario.name}.{name}", None, "ms", note=f"skipped: {why}")
            figures.append(figure)
    return figures


def mcp_figures(sessions: int, smoke: bool = False) -> list[Figure]:
    """p50/p99 per call for each scenario, both servers, and the p50 ratio (target <= 1)."""
    why = _missing()
    if why is not None:
        if smoke and not THEIRS.exists() and OURS.exists():
            why += "; ours ran alone"
            _check_ours_alone()
        return _skipped(why)
    import anyio

    warmup = 1 if smoke else 20
    runner: Callable[[], Any] = lambda: _run(sessions, warmup)  # noqa: E731
    measured = anyio.run(runner)
    figures: list[Figure] = []
    for scenario in SCENARIOS:
        s = measured["samples"][scenario.name]
        ours_p50 = statistics.median(s["ours"]) * 1e3
        theirs_p50 = statistics.median(s["preflights"]) * 1e3
        ends = ", ".join(sorted(measured["endings"][scenario.name]))
        calls = f"{len(s['ours'])} calls"
        figures += [
            Figure(
                f"mcp.{scenario.name}.ours.p50",
                ours_p50,
                "ms",
                note=f"preflight-fsm mcp, SQLite; {calls}; 2026-07-28 protocol: "
                f"{statistics.median(s['ours_2026']) * 1e3:.2f} ms",
            ),
            Figure(
                f"mcp.{scenario.name}.ours.p99",
                _percentile(s["ours"], 0.99) * 1e3,
                "ms",
                note=f"2026-07-28 protocol: {_percentile(s['ours_2026'], 0.99) * 1e3:.2f} ms",
            ),
            Figure(
                f"mcp.{scenario.name}.preflights.p50",
                theirs_p50,
                "ms",
                note=f"preflights-mcp 1.1.4, in memory; {len(s['preflights'])} calls; "
                f"sessions ended: {ends}",
            ),
            Figure(
                f"mcp.{scenario.name}.preflights.p99",
                _percentile(s["preflights"], 0.99) * 1e3,
                "ms",
            ),
            Figure(
                f"mcp.{scenario.name}.p50_ratio",
                ours_p50 / theirs_p50,
                "x",
                target="<= 1.00 (ours / Preflights, p50 per call)",
                ok=ours_p50 <= theirs_p50,
            ),
        ]
    return figures


def _check_ours_alone() -> None:
    """The smoke run without Preflights' environment: our sessions still end as expected."""
    import anyio
    from mcp import Client, StdioServerParameters

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="preflight-fsm-mcp-smoke-") as tmp:
            params = StdioServerParameters(command=str(OURS), args=["mcp"], cwd=tmp)
            async with Client(params, mode="legacy") as client:
                for k, scenario in enumerate(SCENARIOS):
                    await _ours(_Timer(client), scenario, k, True)

    anyio.run(main)
