"""The warm launcher (``warm_processes``) behaves as the installed ``preflight-fsm`` does: the
tests that start it instead of a fresh interpreter test the same program."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import warm_processes
from terminal import Terminal

WARM = warm_processes.program()
COLD = warm_processes.COLD_PROGRAM
TIMEOUT = 60.0


def _run(program: str, *args: str, stdin: str = "", **options: object) -> tuple[int, str, str]:
    done = subprocess.run(
        [program, *args], input=stdin, capture_output=True, text=True, timeout=TIMEOUT, **options
    )  # type: ignore[call-overload]
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("--version",), ""),
        (("chaat",), ""),
        (("chat", "Add OAuth login"), "1\n"),
        (("answer", "no-such-session", "--store", "{tmp}/s.sqlite3", "--json"), ""),
    ],
    ids=["version", "usage-error", "chat-on-stdin", "exit-code-of-a-refusal"],
)
def test_a_warm_process_prints_and_exits_as_the_installed_script_does(
    args: tuple[str, ...], stdin: str, tmp_path: Path
) -> None:
    """Same arguments and input: the same exit code, standard output and standard error."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert _run(COLD, *argv, stdin=stdin, cwd=tmp_path) == _run(
        WARM, *argv, stdin=stdin, cwd=tmp_path
    )


def test_a_warm_process_runs_in_the_directory_and_environment_it_was_given(
    tmp_path: Path,
) -> None:
    """The working directory and the environment are the launcher's, not the zygote's."""
    env = {**os.environ, "PREFLIGHT_FSM_STORE": str(tmp_path / "from-env.sqlite3")}
    code, _, err = _run(WARM, "start", "Add OAuth login", "--json", cwd=tmp_path, env=env)
    assert (0, True) == (code, (tmp_path / "from-env.sqlite3").exists()), err


def test_a_signal_to_the_launcher_reaches_the_program_and_its_end_is_reported(
    tmp_path: Path,
) -> None:
    """SIGTERM sent to the launcher ends the program as it ends the installed one: a `chat`
    waiting for its first answer (a cold `mcp` server, which ends the same way, imports the MCP
    SDK first: 1.1 s of CPU against 0.3 s)."""
    codes = []
    for program in (COLD, WARM):
        with subprocess.Popen(
            [program, "chat", "Add OAuth login"],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as chat:
            try:
                assert chat.stdout is not None
                readable, _, _ = select.select([chat.stdout], [], [], TIMEOUT)
                assert readable, "chat never asked its first question"
                assert "Which authentication approach?\n" == chat.stdout.readline().decode()
                chat.send_signal(signal.SIGTERM)
                codes.append(chat.wait(timeout=TIMEOUT))
            finally:
                chat.kill()
    assert [-signal.SIGTERM, -signal.SIGTERM] == codes


def test_killing_the_launcher_ends_the_program_at_once(tmp_path: Path) -> None:
    """SIGKILL cannot be forwarded: the zygote sees the launcher gone and kills the program, so
    its output pipe closes (nothing keeps running after the test)."""
    with _server(WARM, tmp_path) as server:
        _wait_until_listening(server)
        server.kill()
        assert server.stdout is not None
        readable, _, _ = select.select([server.stdout], [], [], TIMEOUT)
        assert (True, b"") == (bool(readable), server.stdout.read())


def test_kill_ends_a_warm_program_with_sigkill_as_the_installed_ones_process_ends(
    tmp_path: Path,
) -> None:
    """``warm_processes.kill`` SIGKILLs the program itself, not only its launcher: the launcher
    ends killed by SIGKILL, as the installed script's process does, and the program's output
    pipe closes with it."""
    with _server(WARM, tmp_path) as server:
        _wait_until_listening(server)
        warm_processes.kill(server)
        assert server.stdout is not None
        readable, _, _ = select.select([server.stdout], [], [], TIMEOUT)
        ended = server.wait(timeout=TIMEOUT)
        assert (True, -signal.SIGKILL, b"") == (bool(readable), ended, server.stdout.read())


def test_a_warm_program_on_a_terminal_takes_it_over_and_its_ctrl_c_ends_the_program() -> None:
    """Started as the session leader of a pseudo-terminal, the launcher hands the terminal to the
    program: the program's group is the terminal's foreground (its keys and Ctrl-C go there, not
    to the launcher) and leads a session of its own, as the installed script would."""
    term = Terminal([WARM, "chat", "Add OAuth login"])
    try:
        term.expect("4. Other (specify)\n> ")
        foreground = os.tcgetpgrp(term.fd)
        assert (True, foreground) == (foreground != term.pid, os.getsid(foreground))
        term.wait_for_input()
        term.send("\x03")
        assert 130 == term.wait()
    finally:
        term.close()


def test_a_python_variable_the_zygote_did_not_start_with_gets_a_fresh_interpreter(
    tmp_path: Path,
) -> None:
    """A module put on PYTHONPATH (a test of a missing dependency) is imported: the launcher
    runs the installed script instead of a child of the zygote, which imported before."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("print('fresh interpreter')\n")
    env = {**os.environ, "PYTHONPATH": str(shim)}
    code, out, _ = _run(WARM, "--version", env=env)
    assert (0, "fresh interpreter") == (code, out.splitlines()[0])


@contextmanager
def _server(program: str, directory: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``program mcp`` over stdio on a store in ``directory``, killed at the end if running."""
    with subprocess.Popen(
        [program, "mcp", "--store", str(directory / "s.sqlite3")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as server:
        try:
            yield server
        finally:
            server.kill()


def _wait_until_listening(server: subprocess.Popen[bytes]) -> None:
    """An MCP stdio server answers ``initialize`` once it reads its input."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    server.stdin.flush()
    readable, _, _ = select.select([server.stdout], [], [], TIMEOUT)
    assert readable, "the server never answered initialize"
    assert b'"id":1' in server.stdout.readline()
