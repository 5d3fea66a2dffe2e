"""The benchmarks' smoke run: every figure is produced and measures what it claims (not speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FIGURES = (
    "session.shortcut.ours",
    "session.shortcut.preflights",
    "session.shortcut.ratio",
    "session.two_phase.ours",
    "session.two_phase.preflights",
    "session.two_phase.ratio",
    "session.other.ours",
    "session.other.preflights",
    "session.other.ratio",
    "step",
    "snapshot.to_json",
    "snapshot.restore",
    "snapshot.restore_step",
    "snapshot.restore_step.ratio",
    *(
        f"instructions.session.{scenario}.{figure}"
        for scenario in ("shortcut", "two_phase", "other")
        for figure in ("ours", "preflights", "ratio")
    ),
    "instructions.step",
    "instructions.snapshot.restore",
    "instructions.snapshot.restore_step",
    "instructions.snapshot.restore_step.ratio",
    "memory.live_session",
    "memory.rss_growth",
    "threads.identical",
    "threads.steps_per_s",
    "store.sqlite.one_process",
    "store.sqlite.2_processes",
    "store.redis.one_process",
    "store.redis.2_processes",
    "cli.python_floor",
    "cli.engine_import",
    "cli.pf_help",
    "cli.help",
    "cli.version",
    "cli.start",
    "cli.answer",
    *(
        f"mcp.{scenario}.{figure}"
        for scenario in ("shortcut", "two_phase", "other")
        for figure in ("ours.p50", "ours.p99", "preflights.p50", "preflights.p99", "p50_ratio")
    ),
)


@pytest.fixture(scope="module")
def smoke() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_smoke_run_exits_0(smoke: subprocess.CompletedProcess[str]) -> None:
    """Every benchmark's correctness checks pass on tiny counts."""
    assert 0 == smoke.returncode, smoke.stderr


@pytest.mark.parametrize("name", FIGURES)
def test_smoke_run_prints_every_figure(smoke: subprocess.CompletedProcess[str], name: str) -> None:
    """The table names every figure of issue 6 (a skipped one says why)."""
    assert any(line.split()[:1] == [name] for line in smoke.stdout.splitlines()), smoke.stdout


def test_threads_give_the_sequential_results(smoke: subprocess.CompletedProcess[str]) -> None:
    """Threads stepping different sessions through the shared machine change no result."""
    row = next(line for line in smoke.stdout.splitlines() if line.startswith("threads.identical"))
    assert "True" in row.split()


def test_the_shortcuts_benchmark_switches_each_shortcut_off_and_back_on() -> None:
    """benchmarks/shortcuts.py times every figure a shortcut serves with and without it, and
    leaves the engine as it found it."""
    from benchmarks import shortcuts

    from preflight_fsm.snapshot import fast, model, restore, write

    def bound() -> tuple[object, ...]:
        # What each shortcut replaces, in every module that imported it by name.
        names = (
            (model, "canonical"),
            (write, "canonical"),
            (fast, "canonical"),
            (restore, "restored_json"),
        )
        return tuple(getattr(m, n) for m, n in names)

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
