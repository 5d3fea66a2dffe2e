"""The benchmarks' smoke run: every figure is produced and measures what it claims (not speed)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.bench_check  # `make bench-check`, not `make test` (minutes of CPU)

ENGINE = (
    *(
        f"session.{scenario}.{figure}"
        for scenario in ("shortcut", "two_phase", "other")
        for figure in ("ours", "preflights", "ratio")
    ),
    "step",
    "snapshot.to_json",
    "snapshot.restore",
    "snapshot.restore_step",
    "snapshot.restore_step.ratio",
)
FIGURES: dict[str, tuple[str, ...]] = {
    "engine": ENGINE,
    "instructions": (
        *(
            f"instructions.session.{scenario}.{figure}"
            for scenario in ("shortcut", "two_phase", "other")
            for figure in ("ours", "preflights", "ratio")
        ),
        "instructions.step",
        "instructions.snapshot.restore",
        "instructions.snapshot.restore_step",
        "instructions.snapshot.restore_step.ratio",
    ),
    "memory": ("memory.live_session", "memory.rss_growth"),
    "threads": ("threads.identical", "threads.steps_per_s"),
    "stores": (
        "store.sqlite.one_process",
        "store.sqlite.2_processes",
        "store.redis.one_process",
        "store.redis.2_processes",
        "store.postgres.one_process",
        "store.postgres.2_processes",
        "store.postgres.2_processes.ratio",
    ),
    "cli": (
        "cli.python_floor",
        "cli.engine_import",
        "cli.pydantic_floor",
        "cli.typer_floor",
        "cli.pf_help",
        "cli.help",
        "cli.version",
        "cli.start",
        "cli.answer",
    ),
    "mcp": (
        "mcp.stdio.echo.p50",
        "mcp.stdio.ours.p50",
        "mcp.stdio.ours.p99",
        "mcp.stdio.ratio",
        "mcp.stdio.ours.server_cpu",
        "mcp.stdio.ours.client_cpu",
        "mcp.stdio.preflights.p50",
        "mcp.stdio.preflights.ratio",
    ),
    "http": (
        "mcp.http.echo.server_cpu",
        "mcp.http.ours.server_cpu",
        "mcp.http.echo.worker_cpu",
        "mcp.http.ours.worker_cpu",
        "mcp.http.ratio",
        "mcp.http.scaling",
        "mcp.http.auth.server_cpu",
        "mcp.http.auth.overhead",
        "mcp.http.flood.ratio",
    ),
    "verify": ("verify.signed_turn", "verify.decision_file", "verify.command.5_adrs"),
    "web": ("web.page.get", "web.page.answered_turn", "web.signed_turn"),
}
"""Every figure of `make bench`, by the group that measures it (`--only GROUP`)."""

_RUNS: dict[str, subprocess.CompletedProcess[str]] = {}
_SHARED = Path(os.environ.get("PYTEST_XDIST_TESTRUNUID", ""))


def smoke(group: str) -> subprocess.CompletedProcess[str]:
    """The smoke run of one group, run once per test run: its result is kept in this process and,
    under xdist, in a file every worker of the run reads (xdist may schedule a group's tests on
    several workers), so no group is run twice."""
    if group not in _RUNS:
        _RUNS[group] = _shared_run(group) if _SHARED.name else _run(group)
    return _RUNS[group]


def _run(group: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--only", group],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _shared_run(group: str) -> subprocess.CompletedProcess[str]:
    """One run of ``group`` for every worker of this xdist run (keyed by its run id): the first
    worker runs it under an exclusive lock, the others read what it wrote."""
    folder = Path(tempfile.gettempdir()) / f"preflight-fsm-smoke-{_SHARED.name}"
    folder.mkdir(exist_ok=True)
    kept = folder / f"{group}.json"
    with (folder / f"{group}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.exists():
            data = json.loads(kept.read_text(encoding="utf-8"))
            return subprocess.CompletedProcess(data["args"], data["code"], data["out"], data["err"])
        done = _run(group)
        result = {
            "args": done.args,
            "code": done.returncode,
            "out": done.stdout,
            "err": done.stderr,
        }
        kept.write_text(json.dumps(result), encoding="utf-8")
        return done


def _by_group(values: list[tuple[str, ...]]) -> list[Any]:
    return [pytest.param(*v, marks=pytest.mark.xdist_group(f"smoke-{v[0]}")) for v in values]


@pytest.mark.parametrize("group", _by_group([(g,) for g in FIGURES]))
def test_smoke_run_exits_0(group: str) -> None:
    """Every benchmark's correctness checks pass on tiny counts."""
    assert 0 == smoke(group).returncode, smoke(group).stderr


@pytest.mark.parametrize(
    ("group", "name"), _by_group([(g, n) for g, names in FIGURES.items() for n in names])
)
def test_smoke_run_prints_every_figure(group: str, name: str) -> None:
    """The table names every figure (a skipped one says why)."""
    out = smoke(group).stdout
    assert any(line.split()[:1] == [name] for line in out.splitlines()), out


@pytest.mark.xdist_group("smoke-threads")
def test_threads_give_the_sequential_results() -> None:
    """Threads stepping different sessions through the shared machine change no result."""
    out = smoke("threads").stdout
    row = next(line for line in out.splitlines() if line.startswith("threads.identical"))
    assert "True" in row.split()


def test_every_group_is_checked() -> None:
    """The groups above are every group `python -m benchmarks --only` knows."""
    shown = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    help_text = " ".join(shown.stdout.split())
    listed = help_text.split("comma-separated groups: ", 1)[1].split(" (default: all)")[0]
    assert sorted(FIGURES) == sorted(g.strip() for g in listed.split(","))


def test_the_shortcuts_benchmark_switches_each_shortcut_off_and_back_on() -> None:
    """benchmarks/shortcuts.py times every figure a shortcut serves with and without it, and
    leaves the engine as it found it."""
    from benchmarks import shortcuts

    from preflight_fsm import machine
    from preflight_fsm.snapshot import fast, json_form, write

    def bound() -> tuple[object, ...]:
        # What each shortcut replaces, in every module that imported it by name.
        names = (
            (json_form, "signed_json"),
            (fast, "signed_json"),
            (json_form, "canonical"),
            (write, "canonical"),
            (fast, "restored_json"),
            (machine, "_turn_of"),
        )
        return tuple(getattr(m, n) for m, n in names)

    _ = machine.ClarificationMachine("Add OAuth login").turn  # _turn_of binds turn.turn_of
    kept = bound()
    results = shortcuts.measure(inner=2, rounds=1, live=200)
    assert {name: figures for name, (_, figures) in shortcuts.SHORTCUTS.items()} == {
        name: tuple(timed) for name, timed in results.items()
    }
    assert kept == bound()


def test_the_standard_library_canonical_form_equals_the_one_digests_use() -> None:
    """The path shortcuts.py times `canonical` against writes the same bytes."""
    from benchmarks.shortcuts import _stdlib_canonical

    from preflight_fsm import ClarificationMachine
    from preflight_fsm.snapshot import model as snapshot_model

    machine = ClarificationMachine("Speed up the checkout page")
    machine.step({"change_category": "Database", "db_orm": "é 日本 👩\u200d💻"})
    snapshot = machine.snapshot()
    content = {name: getattr(snapshot, name) for name in snapshot_model.SIGNED_FIELDS}
    assert snapshot_model.canonical_content(snapshot) == _stdlib_canonical(content)
