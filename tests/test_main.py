"""The console script's entry (``__main__.py``): one-shot commands run without the collector."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Runs the entry as the console script does, then reports whether the collector was on.
PROBE = """
import gc, sys
sys.argv = ["preflight-fsm", *sys.argv[1:]]
from preflight_fsm.__main__ import main
try:
    main()
except SystemExit:
    pass
print("collector", gc.isenabled(), file=sys.stderr)
"""


def _collector_on(*args: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("collector "), done.stderr
    return last == "collector True"


@pytest.mark.parametrize(
    ("args", "collector_on"),
    [
        ((), False),
        (("--help",), False),
        (("--version",), False),
        (("start", "--help"), False),
        (("list", "--help"), False),
        (("chat", "--help"), True),
        (("mcp", "--help"), True),
        (("diagram", "--help"), True),
    ],
    ids=["no-arguments", "help", "version", "start", "list", "chat", "mcp", "diagram"],
)
def test_only_one_shot_commands_run_without_the_collector(
    args: tuple[str, ...], collector_on: bool
) -> None:
    """D164: start/answer/show/list/delete, --help and --version turn the collector off; others
    (which may run for hours) keep it."""
    assert collector_on == _collector_on(*args)


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
