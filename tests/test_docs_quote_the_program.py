"""Where the docs quote the program (a message, an exit code, a help line), they quote what it
prints: each quotation is checked against the program itself."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import pytest

from mcp_servers import PREFLIGHT_FSM

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_docs_mcp_quotes_the_busy_port_message_and_exit_code(tmp_path: Path) -> None:
    """docs/mcp.md's "a port already taken" sentence is what `mcp --transport http` prints."""
    quoted = re.search(
        r"\(`(cannot listen on [^`]*)`\), exit (\d+)", (ROOT / "docs/mcp.md").read_text()
    )
    assert quoted is not None
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [PREFLIGHT_FSM, "mcp", "--transport", "http", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    said = quoted.group(1).replace("8765", str(port))
    assert (int(quoted.group(2)), True) == (done.returncode, said in done.stderr)


def test_docs_mcp_quotes_the_stdio_greeting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The greeting shown in docs/mcp.md is the one `mcp` prints on a terminal."""
    from preflight_fsm import extras
    from preflight_fsm.cli import mcp

    monkeypatch.setattr(
        extras, "server_command", lambda: ["/home/me/preflight-fsm/.venv/bin/preflight-fsm"]
    )
    greeting = mcp.stdio_greeting("/home/me/my-project/.preflight-fsm/sessions.sqlite3")
    assert greeting in (ROOT / "docs/mcp.md").read_text()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_doc_names_the_wheel_by_its_version(doc: Path) -> None:
    """A wheel's path is globbed (`dist/preflight_fsm-*.whl`): a version in it goes stale."""
    assert [] == re.findall(r"preflight_fsm-\d[^\s`'\"]*\.whl", doc.read_text())


@pytest.mark.parametrize("command", ["mcp", "setup"])
def test_port_help_says_its_range_in_words(command: str) -> None:
    """`--port` says "1 to 65535", not click's `1<=x<=65535`."""
    done = subprocess.run(
        [PREFLIGHT_FSM, command, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (0, False, True) == (
        done.returncode,
        "<=x<=" in done.stdout,
        "1 to 65535" in done.stdout,
    )
