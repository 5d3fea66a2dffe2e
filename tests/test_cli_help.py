"""What a person reads from the command line: help pages, exit codes, a mistyped command, colour.

No page shows a contract id, an internal state name, a Python type (``<str>``) or a brace
placeholder (``{INTENTION}``). The pages are rendered by the command line's own entry in this
process, as wide as the installed command renders them without a terminal; a test holds two of
them equal to what the installed command prints (each process costs ~0.35 s of CPU, and the
pages were read at collection, once per pytest-xdist worker).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

import warm_processes
from preflight_fsm.cli.examples import EXAMPLES

COMMAND = warm_processes.program()  # forked from a warm interpreter (warm_processes)
COMMANDS = (
    "chat",
    "start",
    "answer",
    "show",
    "list",
    "delete",
    "migrate",
    "diagram",
    "check",
    "mcp",
    "setup",
    "conformance",
)
PF_PAGES = ((), ("start",), ("answer",), ("status",), ("resume",), ("reset",))
STATES = ("NeedCategory", "NeedPrimaryField", "NeedOther", "NoPatch")
# A contract id, a Python type in angle brackets, or a placeholder in braces.
MACHINE_WORDS = re.compile(r"\bC1?[0-9]\b|<[a-z][a-z_\[\], |]*>|\{[A-Z_]+\}")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed command as a process: for what only a process shows (its start, a
    terminal, the entry's own error lines)."""
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, timeout=60)


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line run in this process (typer's CliRunner): its exit code and output, as
    a process gives them, without a process's start-up."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    result = CliRunner().invoke(app, list(args), input="", catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def help_page(*command: str) -> str:
    """``preflight-fsm COMMAND --help`` as the installed command prints it to a pipe (click wraps
    at 78 columns without a terminal), rendered in this process."""
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    result = CliRunner().invoke(
        app, [*command, "--help"], prog_name="preflight-fsm", terminal_width=78
    )
    assert 0 == result.exit_code, result.output
    return result.stdout


PAGES = [(), *((name,) for name in COMMANDS)]
if os.environ.get("PREFLIGHT_FSM_NO_PF") is None:
    PAGES += [("pf", *page) for page in PF_PAGES]


@pytest.mark.parametrize("command", PAGES, ids=lambda command: " ".join(command) or "main")
def test_help_pages_hold_a_persons_words(command: tuple[str, ...]) -> None:
    """No help page shows a contract id, a state name, a Python type or a brace placeholder."""
    page = help_page(*command)
    assert page.startswith("Usage: "), page
    assert ([], []) == (MACHINE_WORDS.findall(page), [s for s in STATES if s in page])


@pytest.mark.parametrize("command", [(), ("mcp",)], ids=["main", "mcp"])
def test_the_pages_rendered_here_are_what_the_installed_command_prints(
    command: tuple[str, ...],
) -> None:
    """The main page and the longest command's page, read from the installed command, equal the
    pages the other tests read in this process."""
    assert help_page(*command) == run(*command, "--help").stdout


def test_every_command_page_ends_with_its_examples() -> None:
    """Each command's help page (pf's is Preflights' own) shows the examples of that command,
    as gh's and uv's pages do; the main page shows a few of them."""
    from preflight_fsm.cli import _LAZY
    from preflight_fsm.cli.examples import examples_of

    missing = [name for name in _LAZY if name != "pf" and not examples_of(name)]
    shown = "Examples:\n  $ preflight-fsm answer 5b0f change_category=3\n"
    page = help_page("answer")
    assert ([], shown) == (missing, page[page.index("Examples:") :][: len(shown)])
    assert '$ preflight-fsm chat "Add OAuth login"' in help_page()


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_is_accepted_by_the_command_line(example: str) -> None:
    """Every example names options, choices and arguments that its command takes (parsed by
    the command line itself, without running it)."""
    import shlex

    import typer

    from preflight_fsm.cli import command as entry_group

    words = shlex.split(example)
    cut = [i for i, word in enumerate(words) if word in {"|", ">"}]
    args = words[1 : cut[0] if cut else None]
    group = entry_group()  # the entry's own click group, built once per process (not per example)
    with typer.Context(group, info_name="preflight-fsm") as ctx:
        name, command, rest = group.resolve_command(ctx, args)
        assert command is not None, example
        command.make_context(name, rest, parent=ctx).close()


@pytest.mark.parametrize(
    ("name", "codes"),
    [
        ("start", "0 2 8 9"),
        ("answer", "0 2 3 4 5 6 7 8 9"),
        ("show", "0 2 4 7 8 9"),
        ("list", "0 2 8 9"),
        ("delete", "0 2 4 8 9"),
        ("migrate", "0 2 8 9"),
    ],
)
def test_each_command_lists_the_exit_codes_it_can_return(name: str, codes: str) -> None:
    """A session command's help lists exactly the exit codes that command returns."""
    page = " ".join(help_page(name).split())
    listed = re.search(r"Exit codes: (.*?)\. With --json", page)
    assert listed is not None, page
    assert codes == " ".join(re.findall(r"(?:^|; )(\d)", listed.group(1)))


def test_list_and_delete_return_the_codes_they_list(tmp_path: Path) -> None:
    """delete of an unknown session exits 4; list and delete of a file that is no store exit 8."""
    bad = tmp_path / "bad.sqlite3"
    bad.write_text("not a store")
    assert (4, 8, 8) == (
        invoke("delete", "nope", "--store", str(tmp_path / "new.sqlite3")).returncode,
        invoke("delete", "nope", "--store", str(bad)).returncode,
        invoke("list", "--store", str(bad)).returncode,
    )


@pytest.mark.parametrize(("typed", "meant"), [("chaat", "chat"), ("lst", "list"), ("shwo", "show")])
def test_a_mistyped_command_gets_the_nearest_suggested(typed: str, meant: str) -> None:
    """A mistyped command exits 2 and suggests the nearest command, lazy ones included."""
    result = run(typed)
    assert 2 == result.returncode
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in result.stderr


def test_an_error_is_red_on_a_terminal_and_plain_when_piped() -> None:
    """The error prefix is red and bold on a terminal; piped, the same line without escapes."""
    main, child = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    process = subprocess.Popen(
        [COMMAND, "chaat"],
        stdin=child,
        stdout=child,
        stderr=child,
        close_fds=True,
        env={**env, "TERM": "xterm-256color"},  # a terminal that shows colour
    )
    os.close(child)
    shown = b""
    deadline = time.monotonic() + 30
    try:
        while b"Did you mean" not in shown and time.monotonic() < deadline:
            if select.select([main], [], [], 1)[0]:
                try:
                    shown += os.read(main, 4096)
                except OSError:
                    break
        assert 2 == process.wait(timeout=30)
    finally:
        process.kill()
        os.close(main)
    piped = run("chaat").stderr
    assert b"\x1b[1;31mpreflight-fsm: \x1b[0mNo such command" in shown
    assert piped.startswith("preflight-fsm: No such command")


def test_errors_say_how_a_session_ended_not_its_state_name(tmp_path: Path) -> None:
    """Answering a finished session says it ended with a decision, never `Done`."""
    store = str(tmp_path / "s.sqlite3")
    started = invoke("start", "Add OAuth login", "--store", store, "--json")
    session = json.loads(started.stdout)["session_id"]
    invoke("answer", session, "auth_strategy=1", "--store", store)
    again = invoke("answer", session, "auth_strategy=1", "--store", store)
    assert 6 == again.returncode
    assert "already ended with a decision" in again.stderr
    assert [] == [s for s in (*STATES, "Done") if s in again.stderr]
