"""``preflight-fsm setup`` prints what each agent needs, and what it prints works as pasted.

The printed configurations are started the way an agent starts them: the SDK's own stdio client
runs the printed command and arguments from another directory with a ``PATH`` that does not hold
the virtual environment; over HTTP the printed start command serves the printed URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import Result

import warm_processes
from mcp_servers import PREFLIGHT_FSM, call, connect_http, free_port

TITLES = ("# Claude Code:", "# Cursor:", "# VS Code:")


def setup_process(cwd: Path, *args: str) -> str:
    """What ``preflight-fsm setup ARGS`` prints, run as the installed command from ``cwd``."""
    done = subprocess.run(
        [PREFLIGHT_FSM, "setup", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout


def _invoke(cwd: Path, *args: str) -> Result:
    """``preflight-fsm ARGS`` run in this process (typer's CliRunner) from ``cwd``, its input
    empty."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    with contextlib.chdir(cwd):
        return CliRunner().invoke(app, list(args), input="", catch_exceptions=False)


def setup(cwd: Path, *args: str) -> str:
    """What ``preflight-fsm setup ARGS`` prints, run in this process (typer's CliRunner) from
    ``cwd``: the printed command is then ``python -m preflight_fsm``, still a process of its own
    when started; the tests of the printed executable use :func:`setup_process`."""
    result = _invoke(cwd, "setup", *args)
    assert 0 == result.exit_code, result.stderr
    return result.stdout


def test_every_client_gets_a_configuration_naming_this_executable(tmp_path: Path) -> None:
    """Claude Code, Cursor and VS Code each get one, with the absolute executable and store (one
    run of the installed command prints all three; ``--client``'s JSON alone is checked
    in-process by the other tests)."""
    printed = setup_process(tmp_path)
    store = str(tmp_path / ".preflight-fsm" / "sessions.sqlite3")
    claude_part, cursor_part, vscode_part = (
        printed.split(title, 1)[1].split("\n# ", 1)[0] for title in TITLES
    )
    claude = shlex.split(claude_part.splitlines()[1])
    cursor = json.loads(cursor_part.split("\n", 1)[1])["mcpServers"]["preflight-fsm"]
    vscode = json.loads(vscode_part.split("\n", 1)[1])["servers"]["preflight-fsm"]
    expected = [PREFLIGHT_FSM, "mcp", "--store", store]
    assert [True, True, True] == [title in printed for title in TITLES]
    assert ["claude", "mcp", "add", "preflight-fsm", "--", *expected] == claude
    assert expected == [cursor["command"], *cursor["args"]]
    assert ("stdio", expected) == (vscode["type"], [vscode["command"], *vscode["args"]])


def test_the_printed_stdio_configuration_serves_an_agent_from_anywhere(tmp_path: Path) -> None:
    """Started as printed, from another directory and without the venv on PATH, the server
    answers a tool call and keeps the session in the printed store."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    server = json.loads(setup_process(project, "--client", "vscode"))["servers"]["preflight-fsm"]
    parameters = StdioServerParameters(
        command=server["command"],
        args=server["args"],
        cwd=str(elsewhere),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )

    async def ask() -> dict[str, Any]:
        async with Client(stdio_client(parameters), read_timeout_seconds=30) as client:
            return await call(client, "require_clarification", user_intention="Add OAuth login")

    result = anyio.run(ask)
    assert "needs_clarification" == result["status"]
    assert (project / ".preflight-fsm" / "sessions.sqlite3").is_file()
    assert not (elsewhere / ".preflight-fsm").exists()


def test_the_printed_http_setup_serves_its_url_and_says_so(tmp_path: Path) -> None:
    """--transport http prints a start command and each client's URL; the command serves that
    URL, says so on standard error, and says when it stops."""
    port = free_port()
    # Printed by the installed command, whose start command starts it again (from the warm
    # interpreter); printed in this process, it would be a cold `python -m preflight_fsm`.
    printed = setup_process(tmp_path, "--transport", "http", "--port", str(port))
    start = shlex.split(printed.split("\n")[1])
    assert PREFLIGHT_FSM == start[0]
    cursor = setup(tmp_path, "--transport", "http", "--port", str(port), "--client", "cursor")
    url = json.loads(cursor)["mcpServers"]["preflight-fsm"]["url"]
    errors = tmp_path / "stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen(start, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=sink)
    try:
        deadline = time.monotonic() + 30
        while "serving" not in errors.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)

        async def ask() -> dict[str, Any]:
            async with connect_http(url) as client:
                return await call(client, "require_clarification", user_intention="Add OAuth")

        result = anyio.run(ask)
    finally:
        process.terminate()
        process.wait(timeout=30)
    said = errors.read_text()
    assert f"http://127.0.0.1:{port}/mcp" == url
    assert "needs_clarification" == result["status"]
    assert f"preflight-fsm: serving MCP at {url} (sessions in {tmp_path}" in said
    assert f"preflight-fsm: stopped serving {url}\n" in said
    assert 0 == process.returncode


def test_a_store_error_names_the_absolute_path(tmp_path: Path) -> None:
    """A relative store the server cannot use is named by its absolute path (refused before it
    serves: run in this process, from ``tmp_path``)."""
    (tmp_path / "file").write_text("not a directory")
    done = _invoke(tmp_path, "mcp", "--store", "file/sessions.sqlite3")
    assert 8 == done.exit_code
    assert f"'{tmp_path / 'file' / 'sessions.sqlite3'}'" in done.stderr


@pytest.mark.parametrize("option", ["--preflights"])
def test_preflights_tools_are_configured_under_their_name(tmp_path: Path, option: str) -> None:
    """--preflights configures Preflights' tools, named preflights, with --preflights."""
    server = json.loads(setup(tmp_path, option, "--client", "cursor"))["mcpServers"]["preflights"]
    assert "--preflights" in server["args"]


def test_an_unknown_client_is_a_usage_error(tmp_path: Path) -> None:
    """--client names one of the three agents; anything else exits 2 naming them."""
    done = _invoke(tmp_path, "setup", "--client", "emacs")
    assert 2 == done.exit_code
    assert "claude-code, cursor, vscode" in done.stderr


def test_setup_runs_as_python_m_too(tmp_path: Path) -> None:
    """Run as python -m preflight_fsm, the configuration names that interpreter and module."""
    python = str(Path(warm_processes.COLD_PROGRAM).parent / "python")
    done = subprocess.run(
        [python, "-m", "preflight_fsm", "setup", "--client", "cursor"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ},
    )
    server = json.loads(done.stdout)["mcpServers"]["preflight-fsm"]
    assert [os.path.abspath(python), "-m", "preflight_fsm", "mcp"] == [
        server["command"],
        *server["args"][:3],
    ]


def test_a_team_setup_reads_the_token_from_the_environment_and_the_printed_server_takes_it(
    tmp_path: Path,
) -> None:
    """--public-url prints the server command with the tokens file, and configurations whose
    Authorization header names $PREFLIGHT_FSM_TOKEN; with that token the printed server serves."""
    from preflight_fsm.mcp.tokens import add_token

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    tokens = tmp_path / "tokens.toml"
    token = add_token(tokens, "alice")
    options = ("--transport", "http", "--port", str(port), "--public-url", url)
    printed = setup_process(tmp_path, *options, "--tokens", str(tokens))  # its server warm
    cursor = json.loads(setup(tmp_path, *options, "--client", "cursor"))["mcpServers"]
    header = cursor["preflight-fsm"]["headers"]["Authorization"]
    claude = shlex.split(printed.split(TITLES[0])[1].splitlines()[1])
    start = shlex.split(printed.split("\n")[1])
    assert PREFLIGHT_FSM == start[0]
    errors = tmp_path / "stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen(start, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=sink)
    try:
        deadline = time.monotonic() + 30
        while "serving" not in errors.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)

        async def ask() -> dict[str, Any]:
            async with connect_http(url, token=token) as client:
                return await call(client, "require_clarification", user_intention="Add OAuth")

        result = anyio.run(ask)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "Bearer ${env:PREFLIGHT_FSM_TOKEN}" == header
    assert ["--header", "Authorization: Bearer ${PREFLIGHT_FSM_TOKEN}"] == claude[-2:]
    assert token not in printed
    assert "needs_clarification" == result["status"]


def test_without_the_mcp_extra_setup_exits_2_with_its_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No configuration is printed for a server that would exit 2 at once (the agent would only
    say "failed"): setup refuses, naming the install command."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app, mcp

    why = "the MCP SDK is not installed; install it with: pip install 'preflight-fsm[mcp]'"
    monkeypatch.setattr(mcp, "absent_sdk", lambda: why)
    result = CliRunner().invoke(app, ["setup", "--client", "cursor"])
    assert (2, "") == (result.exit_code, result.stdout)
    assert "install it with: pip install 'preflight-fsm[mcp]'" in result.stderr


@pytest.mark.parametrize(
    "module", ["mcp.server.no_such_server", "mcp.no_such_package.mcpserver", "no_such_sdk.server.x"]
)
def test_setup_finds_the_sdk_absent_where_its_server_module_is_not_installed(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup `setup` makes (without importing the SDK) says what `mcp` would: not installed,
    with the install command, wherever on the module's path the lookup stops."""
    from preflight_fsm.cli import mcp

    monkeypatch.setattr(mcp, "_SDK_SERVER", module)
    why = mcp.absent_sdk()
    assert why is not None
    assert why.startswith("the MCP SDK is not installed; install it with: ")


def test_setup_finds_the_installed_sdk_as_the_server_does() -> None:
    """Where the SDK is installed, the lookup and the import agree: nothing is missing."""
    from preflight_fsm.cli import mcp

    assert (None, None) == (mcp.absent_sdk(), mcp.missing_sdk())
