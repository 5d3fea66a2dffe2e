"""Every file input refuses what is not a regular file, naming it, instead of hanging (issue 30).

A FIFO blocks its reader until someone writes: given one as a flow, a flow's earlier version, a
seal key, a file to check or an LLM recording, a command must answer at once with the path and
what to name instead. Each test runs the real command on a real FIFO.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import warm_processes
from preflight_fsm.bounded import NotRegularFile, read_bounded

# Generous: the command answers at once; hanging is what this bound catches.
TIMEOUT = 60.0
FLOW = Path(__file__).parents[1] / "src" / "preflight_fsm" / "flows" / "default.toml"


# The real command, forked from a warm interpreter (warm_processes): what is tested is how it
# reads a FIFO, not how an interpreter starts.
PREFLIGHT_FSM = warm_processes.program()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding a FIFO named `pipe` and a flow `flow.toml`."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    os.mkfifo(tmp_path / "pipe")
    shutil.copy(FLOW, tmp_path / "flow.toml")
    return tmp_path


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFLIGHT_FSM_")}
    return subprocess.run(
        [PREFLIGHT_FSM, *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**environ, "HOME": str(repo)},
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("start", "Add OAuth login", "--flow", "pipe"),
        ("start", "Add OAuth login", "--seal-key-file", "pipe"),
        ("check", "pipe"),
        ("pf", "start", "--non-interactive", "Add OAuth login", "--llm-replay", "pipe"),
    ],
    ids=["flow", "seal-key-file", "check", "llm-replay"],
)
def test_a_fifo_given_as_a_file_is_refused_at_once_naming_it(
    repo: Path, args: tuple[str, ...]
) -> None:
    """A FIFO named as an input: the command fails at once, its error names the FIFO."""
    done = _run(repo, *args)
    assert 0 != done.returncode
    assert "pipe is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr


def test_a_fifo_among_a_flows_earlier_versions_is_refused_naming_it(repo: Path) -> None:
    """`FLOW.versions/` is read without being named: a FIFO there is refused, not waited on."""
    (repo / "flow.versions").mkdir()
    os.mkfifo(repo / "flow.versions" / "old.toml")
    done = _run(repo, "start", "Add OAuth login", "--flow", "flow.toml")
    assert 2 == done.returncode
    assert "flow.versions/old.toml is a FIFO" in done.stderr


def test_a_device_is_refused_before_a_byte_is_read() -> None:
    """/dev/zero is no file to read: refused as a device, never read up to a limit."""
    with pytest.raises(NotRegularFile, match="is a device, not a regular file"):
        read_bounded(Path("/dev/zero"), 10)
