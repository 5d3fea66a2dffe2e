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


def _read(doc: str) -> str:
    """``doc``'s text with its line wrapping undone (a quotation may span two lines)."""
    return " ".join((ROOT / doc).read_text().split())


def test_docs_cli_quotes_what_chat_says_to_a_number_or_a_stray_key() -> None:
    """docs/cli.md's refusals of `9` and of a stray `n` are what chat says to them."""
    from preflight_fsm import ClarificationMachine
    from preflight_fsm.cli.replies import RefusedReply, parse_reply

    turn = ClarificationMachine("Add OAuth login").turn  # four options, as the docs show
    said = []
    for typed in ("9", "n"):
        with pytest.raises(RefusedReply) as refused:
            parse_reply(turn, typed)
        said.append(str(refused.value))
    assert [True, True] == [f'"{message}"' in _read("docs/cli.md") for message in said], said


def test_docs_cli_quotes_the_did_you_mean_of_an_answer_key(tmp_path: Path) -> None:
    """docs/cli.md's answer to `change_categroy=3` is what `answer` prints, exit 2."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    store = str(tmp_path / "sessions.sqlite3")
    started = CliRunner().invoke(app, ["start", "Improve the checkout flow", "--store", store])
    session_id = started.stdout.split()[1]
    done = CliRunner().invoke(app, ["answer", session_id, "change_categroy=3", "--store", store])
    quoted = re.search(r"`(change_categroy= is no question [^`]*)`", _read("docs/cli.md"))
    assert quoted is not None
    assert (2, True) == (done.exit_code, quoted.group(1) in done.stderr)


def test_docs_cli_quotes_the_did_you_mean_of_a_flow_key(tmp_path: Path) -> None:
    """docs/cli.md's answer to a flow file's `keyword` is what loading the flow says."""
    from preflight_fsm.errors import InvalidFlow
    from preflight_fsm.flow import load_flow

    default = (ROOT / "src/preflight_fsm/flows/default.toml").read_text()
    flow = tmp_path / "typo.toml"
    flow.write_text(default.replace("keywords = ", "keyword = ", 1))
    quoted = re.search(r"`(unknown keys: categories\.0\.keyword [^`]*)`", _read("docs/cli.md"))
    assert quoted is not None
    with pytest.raises(InvalidFlow) as refused:
        load_flow(flow)
    assert quoted.group(1) in str(refused.value)


def test_docs_preflights_quotes_what_pf_says_on_ctrl_c() -> None:
    """docs/preflights.md's line for a Ctrl-C at pf's prompt is the start of what pf prints."""
    pytest.importorskip("preflights")
    from preflight_fsm.integrations.preflights import hints

    quoted = re.search(r"`(preflight-fsm: interrupted: [^`]*?) …`", _read("docs/preflights.md"))
    assert quoted is not None
    assert f"preflight-fsm: interrupted: {hints._KEPT}".startswith(quoted.group(1))


def test_docs_cli_quotes_the_did_you_mean_of_a_command() -> None:
    """docs/cli.md's answer to `preflight-fsm chaat` is what the command line prints, exit 2."""
    quoted = re.search(r"`(No such command 'chaat'\.[^`]*)`", _read("docs/cli.md"))
    assert quoted is not None
    done = subprocess.run(
        [PREFLIGHT_FSM, "chaat"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (2, True) == (done.returncode, quoted.group(1) in done.stderr)


def test_docs_cli_quotes_what_chat_says_when_input_ends() -> None:
    """docs/cli.md's line for input that ends before the session is what chat prints, exit 1."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    done = CliRunner().invoke(app, ["chat", "Add OAuth login"], input="")
    said = done.stderr.strip()
    assert (1, True) == (done.exit_code, f"`{said}`" in _read("docs/cli.md")), said
