"""`preflight-fsm mcp`'s options: bad ones are usage errors, a bad store exits 8."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcp_servers import PREFLIGHT_FSM, free_port
from terminal import Terminal


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`preflight-fsm mcp ARGS` as a process, its input empty: for what only a process shows
    (its exit status, a refusal before it serves, stdio's end)."""
    return subprocess.run(
        [PREFLIGHT_FSM, "mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input="",
        timeout=60,
        check=False,
    )


def _invoke(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`preflight-fsm mcp ARGS` in this process (the command line's own entry, through click's
    test runner), in ``cwd`` with ``env`` added: for the options' own checks, without the ~1.5 s
    of CPU a process spends importing the SDK."""
    import os

    from typer.testing import CliRunner

    from preflight_fsm.cli import app
    from preflight_fsm.cli import mcp as _mcp  # noqa: F401 - registers the command

    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, ["mcp", *args], input="", env=env, catch_exceptions=False)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(
        ["preflight-fsm", "mcp", *args], result.exit_code, result.stdout, result.stderr
    )


def test_an_unknown_transport_is_a_usage_error(tmp_path: Path) -> None:
    done = _invoke("--transport", "carrier-pigeon", cwd=tmp_path)
    assert 2 == done.returncode
    assert "Traceback" not in done.stderr
    assert "stdio or http" in done.stderr


def test_a_store_that_cannot_be_opened_exits_8(tmp_path: Path) -> None:
    """Refused before it serves (in this process: the SDK's import is what a process adds)."""
    (tmp_path / "file").write_text("not a directory")
    done = _invoke("--store", str(tmp_path / "file" / "sessions.sqlite3"), cwd=tmp_path)
    assert 8 == done.returncode
    assert "Traceback" not in done.stderr


def test_preflights_shapes_without_their_builder_are_a_clear_usage_error(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("preflight_fsm.integrations.preflights.agent_tools") is not None:
        return  # the builder is merged: `--preflights` serves it (its own tests cover that)
    done = _run("--preflights", cwd=tmp_path)
    assert 2 == done.returncode
    assert "preflight_fsm.integrations.preflights.agent_tools" in done.stderr


def test_an_unknown_answers_from_policy_is_a_usage_error(tmp_path: Path) -> None:
    """--answers-from takes any, user, web or person; anything else exits 2 saying so."""
    done = _invoke("--answers-from", "everyone", cwd=tmp_path)
    assert 2 == done.returncode
    assert "Traceback" not in done.stderr
    assert "use any, user, web or person" in done.stderr


@pytest.mark.parametrize(
    ("people", "environment"),
    [(None, False), ("", False), ("", True)],
    ids=["missing-default-file", "empty-file", "empty-file-from-the-environment"],
)
def test_the_person_level_without_anyone_enrolled_is_refused_at_start(
    tmp_path: Path, people: str | None, environment: bool
) -> None:
    """--answers-from person (or PREFLIGHT_FSM_ANSWERS_FROM=person) with a missing or empty
    people file exits 2 before serving, naming `people enroll`."""
    extra: list[str] = [] if environment else ["--answers-from", "person"]
    if people is not None:
        (tmp_path / "people.toml").write_text(people)
        extra += ["--people", str(tmp_path / "people.toml")]
    done = _invoke(
        "--store",
        str(tmp_path / "s.sqlite3"),
        *extra,
        cwd=tmp_path,
        env={"PREFLIGHT_FSM_ANSWERS_FROM": "person" if environment else "any"},
    )
    assert (2, "") == (done.returncode, done.stdout)
    assert "preflight-fsm people enroll NAME" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_policy_in_the_environment_is_a_usage_error(tmp_path: Path) -> None:
    """PREFLIGHT_FSM_ANSWERS_FROM is checked like the option, and named in the error."""
    done = _invoke(cwd=tmp_path, env={"PREFLIGHT_FSM_ANSWERS_FROM": "agents"})
    assert 2 == done.returncode
    assert "PREFLIGHT_FSM_ANSWERS_FROM" in done.stderr


def test_a_busy_http_port_is_a_usage_error_not_refused_answers(tmp_path: Path) -> None:
    """`mcp --transport http` on a port something listens on exits 2 naming the port, not 3
    (the exit code of refused answers, which the HTTP server's own startup failure used)."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run("--transport", "http", "--port", str(port), cwd=tmp_path)
    assert 2 == done.returncode
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_http_server_that_fails_to_start_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the port is taken between the check and the server's bind, the HTTP server's own
    startup failure (SystemExit 3) ends the command with exit 2, naming the port."""
    from typer.testing import CliRunner

    import preflight_fsm.mcp
    from preflight_fsm.cli import app
    from preflight_fsm.cli import mcp as _mcp  # noqa: F401 - registers the command

    def fail_to_start(*_: object, **__: object) -> None:
        raise SystemExit(3)

    monkeypatch.setattr(preflight_fsm.mcp, "serve", fail_to_start)
    monkeypatch.chdir(tmp_path)
    port = free_port()
    result = CliRunner().invoke(app, ["mcp", "--transport", "http", "--port", str(port)])
    assert 2 == result.exit_code
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_stdio_on_a_terminal_says_what_it_is_and_ctrl_c_exits_130(tmp_path: Path) -> None:
    """Run by hand, the stdio server greets on stderr with how to connect an agent, and Ctrl-C
    ends it at once with 130 (it used to wait for Ctrl-D)."""
    term = Terminal([PREFLIGHT_FSM, "mcp", "--store", str(tmp_path / "sessions.sqlite3")])
    try:
        term.expect("Ctrl-C stops it.")
        term.send("\x03")
        assert 130 == term.wait(), term.output
    finally:
        term.close()
    assert "claude mcp add preflight-fsm -- " in term.output
    assert "preflight-fsm: stopped (Ctrl-C)" in term.output


def test_stdio_started_on_pipes_as_an_agent_does_writes_nothing_but_the_protocol(
    tmp_path: Path,
) -> None:
    """Started on pipes, as an agent's host starts it, the stdio server greets nobody: nothing
    on standard error, nothing on standard output but replies, and the end of input ends it
    cleanly with 0."""
    ended = subprocess.run(
        [PREFLIGHT_FSM, "mcp", "--store", str(tmp_path / "sessions.sqlite3")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert (0, b"", b"") == (ended.returncode, ended.stdout, ended.stderr)


def test_the_person_level_over_http_needs_someone_enrolled_on_the_pages_origin(
    tmp_path: Path,
) -> None:
    """A passkey counts only on its origin: served at http://127.0.0.1:PORT, a people file whose
    passkeys were enrolled on localhost is refused at start, naming the origin and `people
    enroll`."""
    from software_authenticator import SoftwareAuthenticator

    people = tmp_path / "people.toml"
    people.write_text(SoftwareAuthenticator().person("Ada Lovelace").as_toml())
    port = free_port()
    done = _run(
        *("--transport", "http", "--port", str(port), "--store", str(tmp_path / "s.sqlite3")),
        *("--answers-from", "person", "--people", str(people)),
        cwd=tmp_path,
    )
    assert 2 == done.returncode, done.stderr
    assert f"nobody enrolled a passkey on 'http://127.0.0.1:{port}'" in done.stderr
    assert "preflight-fsm people enroll NAME" in done.stderr


@pytest.mark.parametrize(
    "extra",
    [("--transport", "http", "--public-url", "http://127.0.0.1:8000/mcp"), ()],
    ids=["an-ip-address-origin", "stdio"],
)
def test_enroll_is_a_usage_error_without_a_domain_origin_of_an_http_server(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """--enroll needs the HTTP server's public URL with a domain name (a passkey's relying
    party); elsewhere it exits 2 before anything opens, saying what to pass instead."""
    done = _invoke("--enroll", "Ada", *extra, cwd=tmp_path)
    assert 2 == done.returncode
    assert "--enroll" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".preflight-fsm").exists()
