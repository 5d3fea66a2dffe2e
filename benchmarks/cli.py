"""Wall time of the command line: ``preflight-fsm start`` + ``answer`` against ``pf --help``.

Both are fresh processes, so this is mostly interpreter start-up and imports; the commands run in
a throw-away directory with their own SQLite store.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import Figure
from benchmarks.workloads import SCENARIOS

__all__ = ["cli_figures"]

BIN = Path(sys.executable).parent


def _tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def _timed(argv: list[str], cwd: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode:
        raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}:\n{result.stderr}")
    return elapsed, result.stdout


def _ours(exe: str, cwd: str) -> float:
    scenario = SCENARIOS[0]
    store = ["--store", str(Path(cwd) / "sessions.sqlite3"), "--json"]
    started, out = _timed([exe, "start", scenario.intention, *store], cwd)
    session_id = json.loads(out)["session_id"]
    pairs = [f"{k}={v}" for k, v in scenario.steps[0].items()]
    answered, out = _timed([exe, "answer", session_id, *pairs, *store], cwd)
    turn = json.loads(out)["turn"]
    if turn["state"] != "Done" or turn["patch"] != scenario.patch.model_dump(mode="json"):
        raise AssertionError(f"the CLI session did not end with its patch: {turn}")
    return started + answered


def _skipped(why: str) -> list[Figure]:
    return [
        Figure(name, None, unit, note=f"skipped: {why}")
        for name, unit in (("cli.start_answer", "ms"), ("cli.pf_help", "ms"), ("cli.ratio", "x"))
    ]


def _missing(ours: str | None, pf: str | None) -> str | None:
    if ours is None:
        return "the preflight-fsm command is not installed"
    if pf is None:
        return "Preflights' pf command is not installed (pip install preflights==1.1.4)"
    helped = subprocess.run([ours, "start", "--help"], capture_output=True, check=False)
    if helped.returncode:
        return "preflight-fsm has no start command yet (cli/sessions.py)"
    return None


def cli_figures(rounds: int) -> list[Figure]:
    ours, pf = _tool("preflight-fsm"), _tool("pf")
    why = _missing(ours, pf)
    if why is not None or ours is None or pf is None:
        return _skipped(why or "")
    mine: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-cli-") as tmp:
        _ours(ours, tmp)  # warm the file cache and write bytecode before timing
        _timed([pf, "--help"], tmp)
        for _ in range(rounds):
            mine.append(_ours(ours, tmp))
            theirs.append(_timed([pf, "--help"], tmp)[0])
    ms_ours, ms_pf = statistics.median(mine) * 1e3, statistics.median(theirs) * 1e3
    return [
        Figure("cli.start_answer", ms_ours, "ms", note="two processes: start, then answer to Done"),
        Figure("cli.pf_help", ms_pf, "ms", note="Preflights 1.1.4: one process, pf --help"),
        Figure(
            "cli.ratio",
            ms_ours / ms_pf,
            "x",
            target="ours / pf --help (reported)",
            note="two interpreter start-ups against one",
        ),
    ]
