"""``setup --write`` merges into each client's file; ``--portable`` names a Git URL, not a venv.

Each test runs the command in a temporary project (and a temporary ``HOME`` for the user
scope), with configuration files that already hold other servers.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

OTHER = {"command": "other-server", "args": ["--flag"]}


@dataclass(frozen=True)
class Done:
    """What a run of ``preflight-fsm setup`` ended with."""

    returncode: int
    stdout: str
    stderr: str


def run(cwd: Path, *args: str, home: Path | None = None) -> Done:
    """``preflight-fsm setup ARGS`` run from ``cwd`` with ``home`` as HOME, in this process
    (typer's CliRunner): these tests are about the files written, not about a process; the
    configuration naming this executable is tests/test_cli_setup.py's, run as a process."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    with contextlib.chdir(cwd):
        result = CliRunner().invoke(
            app, ["setup", *args], env={"HOME": str(home or cwd / "home")}, catch_exceptions=False
        )
    return Done(result.exit_code, result.stdout, result.stderr)


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def existing(path: Path, content: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content), encoding="utf-8")


def test_write_creates_each_clients_project_file_with_this_server(tmp_path: Path) -> None:
    """Without files, --write creates .mcp.json, .cursor/mcp.json and .vscode/mcp.json."""
    done = run(tmp_path, "--write")
    assert 0 == done.returncode, done.stderr
    assert ["preflight-fsm"] == list(read(tmp_path / ".mcp.json")["mcpServers"])
    assert ["preflight-fsm"] == list(read(tmp_path / ".cursor/mcp.json")["mcpServers"])
    assert "stdio" == read(tmp_path / ".vscode/mcp.json")["servers"]["preflight-fsm"]["type"]
    assert 3 == done.stdout.count(": added ")


def test_write_keeps_every_other_server_and_key(tmp_path: Path) -> None:
    """Other servers and top-level keys survive; the file keeps 2-space indent and a newline."""
    existing(tmp_path / ".cursor/mcp.json", {"mcpServers": {"other": OTHER}, "extra": [1]})
    done = run(tmp_path, "--write", "--client", "cursor")
    assert 0 == done.returncode, done.stderr
    written = (tmp_path / ".cursor/mcp.json").read_text(encoding="utf-8")
    content = json.loads(written)
    assert OTHER == content["mcpServers"]["other"]
    assert [1] == content["extra"]
    assert written.endswith("}\n")
    assert '\n  "mcpServers": {\n' in written
    assert "added mcpServers['preflight-fsm'] (kept 1 other server)" in done.stdout


def test_write_replaces_only_the_entry_of_the_same_name(tmp_path: Path) -> None:
    """An old preflight-fsm entry is replaced, and the change says so."""
    old = {"type": "stdio", "command": "/old/venv/bin/preflight-fsm", "args": []}
    existing(tmp_path / ".vscode/mcp.json", {"servers": {"preflight-fsm": old, "other": OTHER}})
    done = run(tmp_path, "--write", "--client", "vscode")
    assert 0 == done.returncode, done.stderr
    servers = read(tmp_path / ".vscode/mcp.json")["servers"]
    assert OTHER == servers["other"]
    assert "/old/venv/bin/preflight-fsm" != servers["preflight-fsm"]["command"]
    assert "replaced servers['preflight-fsm']" in done.stdout


def test_write_limited_to_one_client_writes_only_its_file(tmp_path: Path) -> None:
    """--client claude-code writes .mcp.json and nothing else."""
    assert 0 == run(tmp_path, "--write", "--client", "claude-code").returncode
    assert [".mcp.json"] == sorted(p.name for p in tmp_path.iterdir() if p.name != "home")


def test_an_unparseable_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """A broken file: exit 2 naming it and the JSON error; no client's file is written."""
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode/mcp.json").write_text('{"servers": {,}', encoding="utf-8")
    done = run(tmp_path, "--write")
    assert 2 == done.returncode
    assert str(tmp_path / ".vscode/mcp.json") in done.stderr
    assert "line 1 column 14" in done.stderr
    assert not (tmp_path / ".mcp.json").exists()
    assert not (tmp_path / ".cursor").exists()
    assert '{"servers": {,}' == (tmp_path / ".vscode/mcp.json").read_text(encoding="utf-8")


def test_user_scope_merges_into_claude_json_in_home(tmp_path: Path) -> None:
    """--scope user writes ~/.claude.json's mcpServers, keeping its other keys."""
    home = tmp_path / "home"
    existing(home / ".claude.json", {"numStartups": 3, "mcpServers": {"other": OTHER}})
    done = run(tmp_path, "--write", "--scope", "user", "--client", "claude-code", home=home)
    assert 0 == done.returncode, done.stderr
    content = read(home / ".claude.json")
    assert 3 == content["numStartups"]
    assert ["other", "preflight-fsm"] == sorted(content["mcpServers"])
    assert not (tmp_path / ".mcp.json").exists()


def test_user_scope_has_no_vscode_file(tmp_path: Path) -> None:
    """VS Code keeps user servers in its profile: --scope user --client vscode is refused."""
    done = run(tmp_path, "--write", "--scope", "user", "--client", "vscode")
    assert 2 == done.returncode
    assert "--scope user" in done.stderr


def test_portable_names_uvx_and_the_git_url_not_a_venv(tmp_path: Path) -> None:
    """--portable --from URL starts the server with uvx from that URL, without absolute paths."""
    url = "https://github.com/example/preflight-fsm.git"
    done = run(tmp_path, "--portable", "--from", url, "--client", "cursor")
    assert 0 == done.returncode, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["preflight-fsm"]
    assert "uvx" == entry["command"]
    assert ["--from", f"preflight-fsm[mcp] @ git+{url}", "preflight-fsm", "mcp"] == entry["args"]


@pytest.mark.parametrize(
    ("origin", "requirement"),
    [
        ("git@github.com:o/r.git", "preflight-fsm[mcp] @ git+ssh://git@github.com/o/r.git"),
        ("git+https://h/o/r", "preflight-fsm[mcp] @ git+https://h/o/r"),
    ],
)
def test_portable_turns_any_git_url_into_a_requirement(origin: str, requirement: str) -> None:
    """An scp-like or already git+ URL becomes a requirement uv installs."""
    from preflight_fsm.cli.portable import git_requirement

    assert requirement == git_requirement(origin)


def test_portable_reads_the_clones_origin(tmp_path: Path) -> None:
    """Without --from, the URL is this clone's origin remote (when it has one)."""
    from preflight_fsm.cli.portable import origin_url

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    subprocess.run(
        ["git", "-C", str(tmp_path), "remote", "add", "origin", "https://h/o/r.git"],
        check=True,
        timeout=30,
    )
    assert "https://h/o/r.git" == origin_url(tmp_path)


def test_portable_without_an_origin_says_to_pass_from(tmp_path: Path) -> None:
    """A clone without origin: the error says to pass --from."""
    from preflight_fsm.cli.portable import NoSourceUrl, origin_url

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    with pytest.raises(NoSourceUrl, match="pass --from GIT_URL"):
        origin_url(tmp_path)
