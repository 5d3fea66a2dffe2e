"""The console script's entry (``__main__.py``): one-shot commands run without the collector
and end with their objects frozen."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Runs the entry as the console script does, once for each argument list given as JSON, and
# reports, for each, whether the collector was on and whether objects were frozen when the entry
# returned; between two runs it puts the collector back as an interpreter starts (on, nothing
# frozen), so each run sees what a fresh process would.
PROBE = """
import gc, json, sys
from preflight_fsm.__main__ import main
seen = []
for args in json.loads(sys.argv[1]):
    gc.enable()
    gc.unfreeze()
    sys.argv = ["preflight-fsm", *args]
    try:
        main()
    except SystemExit:
        pass
    seen.append([gc.isenabled(), gc.get_freeze_count() > 0])
print("collector", json.dumps(seen), file=sys.stderr)
"""

CASES = [
    ((), True),
    (("--help",), True),
    (("--version",), True),
    (("start", "--help"), True),
    (("list", "--help"), True),
    (("chat", "--help"), False),
    (("mcp", "--help"), False),
    (("diagram", "--help"), False),
]


@pytest.fixture(scope="module")
def collector_after() -> dict[tuple[str, ...], tuple[bool, bool]]:
    """For each case's arguments: whether the collector was on after ``preflight-fsm ARGS``, and
    whether objects froze (one interpreter runs the entry for every case, in turn)."""
    argvs = [list(args) for args, _ in CASES]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argvs)], capture_output=True, text=True, timeout=60
    )
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("collector "), done.stderr
    seen = json.loads(last.split(" ", 1)[1])
    return {args: (on, frozen) for (args, _), (on, frozen) in zip(CASES, seen, strict=True)}


@pytest.mark.parametrize(
    ("args", "one_shot"),
    CASES,
    ids=["no-arguments", "help", "version", "start", "list", "chat", "mcp", "diagram"],
)
def test_only_one_shot_commands_run_without_the_collector(
    collector_after: dict[tuple[str, ...], tuple[bool, bool]], args: tuple[str, ...], one_shot: bool
) -> None:
    """D164: start/answer/show/list/delete, --help and --version turn the collector off and freeze
    their objects at the end; others (which may run for hours) keep the collector as it is."""
    assert (not one_shot, one_shot) == collector_after[args]


def test_python_m_preflight_fsm_runs_the_command_line() -> None:
    """`python -m preflight_fsm --version` prints the version, as `preflight-fsm` does."""
    from preflight_fsm import __version__

    done = subprocess.run(
        [sys.executable, "-m", "preflight_fsm", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (0, f"preflight-fsm {__version__}\n") == (done.returncode, done.stdout)
