"""The console script's entry (``__main__.py``): one-shot commands run without the collector
and end with their objects frozen."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Runs the entry as the console script does, then reports whether the collector was on and
# whether the objects were frozen.
PROBE = """
import gc, sys
sys.argv = ["preflight-fsm", *sys.argv[1:]]
from preflight_fsm.__main__ import main
try:
    main()
except SystemExit:
    pass
print("collector", gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)
"""


def _collector(*args: str) -> tuple[bool, bool]:
    """Whether the collector was on after ``preflight-fsm *args``, and whether objects froze."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("collector "), done.stderr
    on, frozen = last.split()[1:]
    return on == "True", frozen == "True"


@pytest.mark.parametrize(
    ("args", "one_shot"),
    [
        ((), True),
        (("--help",), True),
        (("--version",), True),
        (("start", "--help"), True),
        (("list", "--help"), True),
        (("chat", "--help"), False),
        (("mcp", "--help"), False),
        (("diagram", "--help"), False),
    ],
    ids=["no-arguments", "help", "version", "start", "list", "chat", "mcp", "diagram"],
)
def test_only_one_shot_commands_run_without_the_collector(
    args: tuple[str, ...], one_shot: bool
) -> None:
    """D164: start/answer/show/list/delete, --help and --version turn the collector off and freeze
    their objects at the end; others (which may run for hours) keep the collector as it is."""
    assert (not one_shot, one_shot) == _collector(*args)


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
