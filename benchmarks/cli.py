"""CPU time of the command line, one fresh process per command, side by side in one run.

Each round runs, in turn: ``python -c pass`` (the interpreter's floor), ``python -c "import
preflight_fsm"`` (the package's import, which every command pays; lazy since D160), pydantic with
one model, a typer command with one argument and one flag and nothing else (typer 0.29 coerces
every parameter through a pydantic ``TypeAdapter``, so running one imports pydantic; ours read
their parameters without it, ``cli/coercion.py``, D301), Preflights'
``pf --help`` (the peer), ``preflight-fsm --help``, ``preflight-fsm --version``, ``preflight-fsm
start`` of a fresh session and ``preflight-fsm answer`` of that session to Done. Each figure is the
CPU time the process used (user + system, from ``wait4``), which a shared machine's load does not
stretch as it stretches wall time; medians over the rounds. The commands run in a throw-away
directory with their own SQLite store. Target (issue 32): ``start`` and ``answer`` at most 1.5 x
``pf --help`` (issue 25 asked 1.0 x, which pydantic's import alone exceeds: docs/performance.md).

Both sides run from bytecode, as installed programs do: pip compiled ``pf`` when it installed it,
and this module compiles the package's modules before timing (D163). Without that, an editable
install under ``PYTHONDONTWRITEBYTECODE`` (set on this machine) recompiles every module it imports
on every command, about 30 ms that no installed ``preflight-fsm`` pays.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import preflight_fsm
from benchmarks.report import Figure
from benchmarks.workloads import SCENARIOS

__all__ = ["cli_figures"]

BIN = Path(sys.executable).parent
TARGET = 1.5
"""``start`` and ``answer`` over ``pf --help``, in CPU time (issue 32)."""
PYDANTIC_FLOOR = "from pydantic import BaseModel\nclass Model(BaseModel):\n    x: int"
TYPER_FLOOR = (
    "import typer\n"
    "app = typer.Typer(add_completion=False, rich_markup_mode=None)\n"
    "@app.command()\n"
    "def start(intention: str, json_output: bool = typer.Option(False, '--json')) -> None:\n"
    "    print(intention)\n"
    "@app.command()\n"
    "def show() -> None:\n"
    "    pass\n"
    "app()"
)
"""A two-command typer program, run as ``start INTENTION --json``: the command line's own floor."""


def _tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def _timed(argv: list[str], cwd: str) -> tuple[float, str]:
    """The CPU seconds ``argv`` used (user + system, its children included), and its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode:
            raise RuntimeError(
                f"{' '.join(argv)} exited {process.returncode}:\n{err.read().decode()}"
            )
        return usage.ru_utime + usage.ru_stime, out.read().decode()


def _skipped(why: str) -> list[Figure]:
    return [Figure(name, None, unit, note=f"skipped: {why}") for name, unit in _NAMES]


_NAMES = (
    ("cli.python_floor", "ms"),
    ("cli.engine_import", "ms"),
    ("cli.pydantic_floor", "ms"),
    ("cli.typer_floor", "ms"),
    ("cli.pf_help", "ms"),
    ("cli.help", "ms"),
    ("cli.version", "ms"),
    ("cli.start", "ms"),
    ("cli.answer", "ms"),
)


def _missing(ours: str | None, pf: str | None) -> str | None:
    if ours is None:
        return "the preflight-fsm command is not installed"
    if pf is None:
        return "Preflights' pf command is not installed (pip install preflights==1.1.4)"
    return None


def _compile_package() -> None:
    """Write the package's bytecode, as installing it would (see the module's docstring).

    A package it cannot write to was installed by pip, which wrote the bytecode then.
    """
    compileall.compile_dir(Path(preflight_fsm.__file__).parent, quiet=2)


def cli_figures(rounds: int) -> list[Figure]:
    ours, pf = _tool("preflight-fsm"), _tool("pf")
    why = _missing(ours, pf)
    if why is not None or ours is None or pf is None:
        return _skipped(why or "")
    _compile_package()
    times: dict[str, list[float]] = {name: [] for name, _ in _NAMES}
    scenario = SCENARIOS[0]
    pairs = [f"{k}={v}" for k, v in scenario.steps[0].items()]
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-cli-") as tmp:
        store = ["--store", str(Path(tmp) / "sessions.sqlite3"), "--json"]

        def session() -> tuple[float, float]:
            started, out = _timed([ours, "start", scenario.intention, *store], tmp)
            session_id = json.loads(out)["session_id"]  # a fresh session every round
            answered, out = _timed([ours, "answer", session_id, *pairs, *store], tmp)
            turn = json.loads(out)["turn"]
            if turn["state"] != "Done" or turn["patch"] != scenario.patch.model_dump(mode="json"):
                raise AssertionError(f"the CLI session did not end with its patch: {turn}")
            return started, answered

        runs: dict[str, Callable[[], float]] = {
            "cli.python_floor": lambda: _timed([sys.executable, "-c", "pass"], tmp)[0],
            "cli.engine_import": lambda: _timed(
                [sys.executable, "-c", "import preflight_fsm"], tmp
            )[0],
            "cli.pydantic_floor": lambda: _timed([sys.executable, "-c", PYDANTIC_FLOOR], tmp)[0],
            "cli.typer_floor": lambda: _timed(
                [sys.executable, "-c", TYPER_FLOOR, "start", scenario.intention, "--json"], tmp
            )[0],
            "cli.pf_help": lambda: _timed([pf, "--help"], tmp)[0],
            "cli.help": lambda: _timed([ours, "--help"], tmp)[0],
            "cli.version": lambda: _timed([ours, "--version"], tmp)[0],
        }
        session()  # warm the file cache and write bytecode before timing
        for _ in range(rounds):
            for name, run in runs.items():
                times[name].append(run())
            started, answered = session()
            times["cli.start"].append(started)
            times["cli.answer"].append(answered)
    ms = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    peer = ms["cli.pf_help"]
    target = f"<= {TARGET:.2f} x pf --help ({peer * TARGET:.0f} ms)"
    return [
        Figure("cli.python_floor", ms["cli.python_floor"], "ms", note="floor: python -c pass"),
        Figure(
            "cli.engine_import",
            ms["cli.engine_import"],
            "ms",
            note="python -c 'import preflight_fsm': paid by every command",
        ),
        Figure(
            "cli.pydantic_floor",
            ms["cli.pydantic_floor"],
            "ms",
            note="python -c: pydantic and one model, what a command running the engine pays",
        ),
        Figure(
            "cli.typer_floor",
            ms["cli.typer_floor"],
            "ms",
            note=(
                "python -c: a typer command with one argument and one flag, typer's own coercion"
                f" (pydantic adapters; ours skip them, D301): {ms['cli.typer_floor'] / peer:.2f} x"
                " pf --help"
            ),
        ),
        Figure("cli.pf_help", peer, "ms", note="peer: Preflights 1.1.4's pf --help"),
        Figure("cli.help", ms["cli.help"], "ms", note="preflight-fsm --help"),
        Figure("cli.version", ms["cli.version"], "ms", note="preflight-fsm --version"),
        Figure(
            "cli.start",
            ms["cli.start"],
            "ms",
            target=target,
            ok=ms["cli.start"] <= peer * TARGET,
            note=f"start a fresh session (SQLite): {ms['cli.start'] / peer:.2f} x pf --help",
        ),
        Figure(
            "cli.answer",
            ms["cli.answer"],
            "ms",
            target=target,
            ok=ms["cli.answer"] <= peer * TARGET,
            note=f"answer it to Done (SQLite): {ms['cli.answer'] / peer:.2f} x pf --help",
        ),
    ]
