"""``python -m benchmarks [--smoke]``: every figure of issue 6, as a table and as JSON.

A complete full run writes ``benchmarks/results.json`` and the figures block of
``docs/performance.md``. ``--smoke`` runs every figure on tiny counts, checks that each measures
what it claims (ours end in Done with the expected patch, threads give the sequential results,
restore + step gives the live step's turn, ...) and writes nothing unless asked; it exits 1 when a
check fails, never because a figure is slow.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from benchmarks.cli import cli_figures
from benchmarks.engine import engine_figures
from benchmarks.instructions import instruction_figures
from benchmarks.mcp import mcp_figures
from benchmarks.mcp_http import http_figures
from benchmarks.mcp_http_flood import flood_figures
from benchmarks.memory import memory_figures
from benchmarks.report import Figure, machine_info, table, write_docs, write_json
from benchmarks.stores import store_figures
from benchmarks.threads import thread_figures
from benchmarks.verify import verify_figures
from benchmarks.web import web_figures

ROOT = Path(__file__).resolve().parent.parent

FULL = {
    "inner": 200,
    "rounds": 31,
    "live": 100_000,
    "sessions": 1_000_000,
    "threads": 4,
    "thread_sessions": 20_000,
    "store_sessions": 1_000,
    "processes": max(2, os.cpu_count() or 2),
    "cli_rounds": 7,
    "mcp_rounds": 20,
    "mcp_per_round": 4,
    "http_clients": 8,
    "http_rounds": 10,
    "http_each": 5,
    "instr_calls": 2_000,
    "verify_files": 1_000,
}
SMOKE = {
    "inner": 20,
    "rounds": 3,
    "live": 2_000,
    "sessions": 5_000,
    "threads": 4,
    "thread_sessions": 300,
    "store_sessions": 20,
    "processes": 2,
    "cli_rounds": 1,
    "mcp_rounds": 1,
    "mcp_per_round": 1,
    "http_clients": 2,
    "http_rounds": 1,
    "http_each": 1,
    "instr_calls": 20,
    "verify_files": 5,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--smoke", action="store_true", help="tiny counts; check, don't time")
    for name, value in FULL.items():
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, type=int, default=None, help=f"default {value:,} (full run)")
    parser.add_argument(
        "--only",
        default=None,
        help=(
            "comma-separated groups: engine, instructions, memory, threads, stores, cli, mcp,"
            " http, verify, web"
            " (default: all)"
        ),
    )
    parser.add_argument("--json", type=Path, default=None, help="where to write the JSON record")
    parser.add_argument(
        "--docs", type=Path, default=None, help="markdown file whose block to update"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = dict(SMOKE if args.smoke else FULL)
    for name in settings:
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    # Only a complete full run replaces the published record; others write where they are told.
    complete = not args.smoke and not args.only
    out_json = args.json or (ROOT / "benchmarks" / "results.json" if complete else None)
    out_docs = args.docs or (ROOT / "docs" / "performance.md" if complete else None)

    s = settings
    groups: list[tuple[str, Callable[[], list[Figure]]]] = [
        ("engine", lambda: engine_figures(s["inner"], s["rounds"])),
        ("instructions", lambda: instruction_figures(s["instr_calls"])),
        ("memory", lambda: memory_figures(s["live"], s["sessions"])),
        (
            "threads",
            lambda: thread_figures(
                s["threads"], s["thread_sessions"], 1e-6 if args.smoke else None
            ),
        ),
        ("stores", lambda: store_figures(s["store_sessions"], s["processes"])),
        ("cli", lambda: cli_figures(s["cli_rounds"])),
        ("mcp", lambda: mcp_figures(s["mcp_rounds"], s["mcp_per_round"])),
        (
            "http",
            lambda: [
                *http_figures(s["http_clients"], s["http_rounds"], s["http_each"]),
                *flood_figures(3 * s["http_each"]),
            ],
        ),
        ("verify", lambda: verify_figures(s["inner"], s["rounds"], s["verify_files"])),
        ("web", lambda: web_figures(s["inner"], s["rounds"])),
    ]
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {name for name, _ in groups}
        if unknown:
            print(f"unknown group(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        groups = [(name, run) for name, run in groups if name in wanted]
    figures: list[Figure] = []
    failed: list[str] = []
    for name, run in groups:
        start = time.perf_counter()
        try:
            got = run()
        except Exception:
            failed.append(name)
            print(f"[{name}] FAILED:\n{traceback.format_exc()}", file=sys.stderr)
            continue
        figures += got
        print(f"[{name}] {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)

    print(table(figures))
    info = machine_info()
    mode = "smoke" if args.smoke else "full"
    print(f"\n{mode} run on {info['nproc']} cores of {info['cpu']}, {info['python']}")
    if out_json is not None:
        write_json(out_json, figures, info, {"mode": mode, **settings})
        print(f"wrote {out_json}")
    if out_docs is not None:
        when = time.strftime("%Y-%m-%d", time.localtime())
        if write_docs(out_docs, figures, info, when):
            print(f"updated the figures in {out_docs}")
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
