"""``chat --web`` (cli/web.py): the command prints a link, the person answers on the page (its
form posted as the browser posts it: the page in headless Chromium is test_web_browser.py's,
D306), the command prints the outcome."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import warm_processes
from preflight_fsm.cli import app
from preflight_fsm.cli.passkey_option import PASSKEY_NEEDS_WEB
from preflight_fsm.cli.report import EXIT_USAGE
from web_pages import answer_by_form

COMMAND = warm_processes.program()  # forked from a warm interpreter (warm_processes)


@pytest.fixture
def chat_web() -> Iterator[subprocess.Popen[str]]:
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [COMMAND, "chat", "--web", "Add a database table"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def test_chat_web_prints_a_link_and_the_outcome_the_person_chose(
    chat_web: subprocess.Popen[str],
) -> None:
    assert chat_web.stdout is not None
    first = chat_web.stdout.readline()
    link = re.search(r"http://localhost:\d+/answer/\S+", first)
    assert link, first
    answer_by_form(link.group(0), {"db_type": "MySQL"})
    rest, _ = chat_web.communicate(timeout=60)
    assert (0, True) == (chat_web.returncode, "MySQL" in rest)


def test_chat_web_with_a_link_nobody_uses_ends_when_it_expires() -> None:
    done = subprocess.run(
        [COMMAND, "chat", "--web", "--link-ttl", "1", "Add a database table"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (1, True) == (done.returncode, "the link expired" in done.stdout)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--passkey"], PASSKEY_NEEDS_WEB),
        (["--web", "--passkey", "--people", "missing.toml"], "people enroll NAME"),
        (["--web", "--passkey", "--people", "empty.toml"], "people enroll NAME"),
    ],
    ids=["passkey-without-web", "people-file-missing", "people-file-lists-nobody"],
)
def test_chat_passkey_misused_says_what_to_do_in_one_line_with_the_usage_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: list[str], said: str
) -> None:
    """The same words as `pf --web --passkey` (cli/passkey_option.py), before any page."""
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["chat", *options, "Add a database table"])
    [line] = done.stderr.splitlines()
    assert (EXIT_USAGE, True) == (done.exit_code, said in line), line
