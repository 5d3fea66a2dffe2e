"""``preflight-fsm pf start INTENTION --web``: Preflights' own ``pf`` as a process, its rounds
answered by the person on the answer page (each form posted as the browser posts it); the ADR
records ``user_web``. With ``--passkey`` each engine round is signed with the person's passkey
(in headless Chromium's virtual authenticator after a real enrollment; on resume, the software
passkey posting what the page's script posts) and the ADR passes ``verify --require person``."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("preflights")

from selenium.webdriver.remote.webdriver import WebDriver
from typer.testing import CliRunner

from person_passkey import Enrolled, holding_port, sign_by_form, software_passkey, software_people
from preflight_fsm.cli import app
from preflight_fsm.cli.passkey_option import PASSKEY_NEEDS_WEB
from preflight_fsm.integrations.preflights.command_line import run_pf
from preflights_e2e import PREFLIGHT_FSM, PROVIDER_VARIABLE, make_repo
from preflights_e2e import run_pf as run_pf_in
from software_authenticator import SoftwareAuthenticator
from test_preflights_person import answer_and_sign
from test_preflights_web import CHOSEN, INTENTION, answer_by_post

TIMEOUT = 60.0


@contextmanager
def pf_web(repo: Path, home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``preflight-fsm pf ARGS --web`` running in ``repo``, and the link it printed; killed if
    it is still running at the end of the block."""
    inherited = {k: v for k, v in os.environ.items() if not PROVIDER_VARIABLE.match(k)}
    process = subprocess.Popen(
        [PREFLIGHT_FSM, "pf", *args, "--web"],
        cwd=repo,
        env={**inherited, "HOME": str(home), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        seen = ""
        while (found := re.search(r"http://localhost:\d+/answer/[A-Za-z0-9_-]+", seen)) is None:
            seen += lines.get(timeout=TIMEOUT)
        yield process, found.group(0)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


def test_pf_web_prints_a_link_and_the_adr_records_the_page(tmp_path: Path) -> None:
    """The person posts each round's form as the browser posts it: the page's rounds in the
    browser are test_preflights_web.py's, pf's page in the browser the passkey test's below."""
    repo, home = make_repo(tmp_path)
    with pf_web(repo, home, "start", INTENTION) as (process, link):
        shown = answer_by_post(link)
        assert 0 == process.wait(timeout=TIMEOUT)
    adr = next((repo / "docs" / "adr").glob("*.md")).read_text(encoding="utf-8")
    assert "Decision documented" in shown
    assert ("Passkeys", "user_web") == (
        "Passkeys" if "Passkeys" in adr else adr,
        "user_web" if "user_web" in adr else adr,
    )


def verify_person(people: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    """``preflight-fsm verify --require person --people PEOPLE FILE...``, as CI runs it."""
    return subprocess.run(
        [PREFLIGHT_FSM, "verify", "--require", "person", "--people", str(people), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_pf_web_passkey_signs_every_engine_round_and_the_adr_and_task_pass_verify_until_edited(
    browser: WebDriver, ada: Enrolled, tmp_path: Path
) -> None:
    repo, home = make_repo(tmp_path)
    started = ("start", INTENTION, "--passkey", "--people", str(ada.people))
    with pf_web(repo, home, *started) as (process, link):
        shown = answer_and_sign(browser, link)
        assert 0 == process.wait(timeout=TIMEOUT)
    adr = next((repo / "docs" / "adr").glob("*.md"))
    verified = verify_person(ada.people, adr, repo / "docs" / "CURRENT_TASK.md")
    adr.write_text(adr.read_text(encoding="utf-8").replace("Passkeys", "Passkeyz", 1), "utf-8")
    tampered = CliRunner().invoke(  # in-process: the process boundary is checked just above
        app, ["verify", "--require", "person", "--people", str(ada.people), str(adr)]
    )
    assert "Decision documented" in shown
    assert (0, 2) == (verified.returncode, verified.stdout.count("Ada Lovelace")), verified.stdout
    assert (14, True) == (tampered.exit_code, "tampered" in tampered.stdout), tampered.stdout


def test_pf_resume_web_passkey_after_an_interrupted_page_signs_every_round_and_passes_verify(
    tmp_path: Path,
) -> None:
    """`pf start --web --passkey` whose page could not be served (its port held) closes its
    session; the `pf resume --web --passkey` it names asks again from the intention on the
    signed page, and the decision passes `verify --require person`. Ada signs with her
    software passkey (what the page's script posts): the test above signs in the browser."""
    repo, home = make_repo(tmp_path)
    ada, people = software_passkey(tmp_path)
    passkey = ("--passkey", "--people", str(people))
    with holding_port(ada.origin):
        interrupted = run_pf_in(repo, home, "start", INTENTION, "--web", *passkey)
    assert (1, True) == (interrupted.returncode, "pf resume --web --passkey" in interrupted.stderr)
    with pf_web(repo, home, "resume", *passkey) as (process, link):
        _, shown = sign_by_form(link, CHOSEN, ada)
        assert 0 == process.wait(timeout=TIMEOUT)
    adr = next((repo / "docs" / "adr").glob("*.md"))
    task = repo / "docs" / "CURRENT_TASK.md"
    verified = CliRunner().invoke(  # in-process: the test above runs verify as a process
        app, ["verify", "--require", "person", "--people", str(people), str(adr), str(task)]
    )
    assert "Decision documented" in shown
    assert (0, 2) == (verified.exit_code, verified.stdout.count("Ada Lovelace")), verified.stdout


@pytest.mark.parametrize("options", [["--web"], ["--web", "--passkey"]], ids=["web", "passkey"])
def test_pf_web_without_the_page_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    monkeypatch.setitem(sys.modules, "preflight_fsm.integrations.preflights.page_loop", None)
    assert (1, 0) == (run_pf(["start", "Add a thing", *options]), run_pf(["--version"]))
    assert "--web needs the answer page" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--passkey"], PASSKEY_NEEDS_WEB),
        (["--web", "--passkey", "--people", "../missing.toml"], "people enroll NAME"),
        (["--web", "--passkey", "--people", "../empty.toml"], "people enroll NAME"),
        (["--web", "--passkey", "--people"], "--people needs the people file"),
        (
            ["--web", "--passkey", "--people", "../two-ports.toml"],
            "different localhost ports (Ada Lovelace on 8765; Grace Hopper on 9000)",
        ),
    ],
    ids=[
        "passkey-without-web",
        "people-file-missing",
        "people-file-lists-nobody",
        "no-file",
        "people-on-two-ports",
    ],
)
def test_pf_passkey_misused_says_what_to_do_in_one_line_and_starts_no_session(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    options: list[str],
    said: str,
) -> None:
    repo, home = make_repo(tmp_path)
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    two_ports = [
        SoftwareAuthenticator(seed, origin=f"http://localhost:{port}").person(name).as_toml()
        for seed, name, port in ((1, "Ada Lovelace", 8765), (2, "Grace Hopper", 9000))
    ]
    (tmp_path / "two-ports.toml").write_text("\n".join(two_ports), encoding="utf-8")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("HOME", str(home))
    code = run_pf(["start", "Add a thing", *options])
    [line] = capsys.readouterr().err.splitlines()
    assert (1, True) == (code, said in line), line
    assert [] == [f.name for d in (repo, home) for f in d.iterdir() if f.name != ".git"]


@pytest.mark.parametrize("option", ["--non-interactive", "--json"])
def test_pf_passkey_where_nothing_is_prompted_reads_no_people_file_and_lists_the_questions(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    option: str,
) -> None:
    """Nothing is answered, so nothing is signed: --passkey is ignored as --web is (D286)."""
    repo, home = make_repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("HOME", str(home))
    passkey = ["--web", "--passkey", "--people", "../missing.toml"]
    code = run_pf(["start", option, INTENTION, *passkey])
    captured = capsys.readouterr()
    assert (0, "") == (code, captured.err)
    assert "uthentication" in captured.out


def test_pf_web_passkey_whose_enrolled_port_is_taken_says_so_and_resume_asks_again(
    tmp_path: Path,
) -> None:
    """The passkeys count only on the origin they were enrolled on: with its port taken the
    page cannot be served there; pf says which port, and closes its session so that `pf
    resume` asks again once the port is free (nothing was answered)."""
    repo, home = make_repo(tmp_path)
    people, origin = software_people(tmp_path)
    with holding_port(origin):
        done = run_pf_in(
            repo, home, "start", INTENTION, "--web", "--passkey", "--people", str(people.source)
        )
    said = origin.removeprefix("http://")
    assert (1, True) == (done.returncode, said in done.stderr), done.stderr
    assert "pf resume --web --passkey" in done.stderr
    assert not (repo / ".preflights" / "current_session.json").exists()
    assert (repo / ".preflights" / "last_intention.txt").exists()


def test_pf_web_link_nobody_uses_closes_the_session_so_resume_asks_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """While pf's session is active its resume refuses: a link that expired unused closes it."""
    from preflights.cli.state import load_session

    from preflight_fsm.integrations.preflights.command_line import build_pf_app
    from preflight_fsm.integrations.preflights.page_loop import page_loop

    repo, home = make_repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("HOME", str(home))
    assert 0 == run_pf(["start", "--non-interactive", INTENTION])
    with pytest.raises(SystemExit) as ended:
        page_loop(build_pf_app(), link_ttl=0.1)(str(repo), load_session(str(repo)))
    said = capsys.readouterr().err
    assert (1, True) == (ended.value.code, "`preflight-fsm pf resume --web`" in said), said
    assert not (repo / ".preflights" / "current_session.json").exists()


def test_pf_commands_that_prompt_list_web_passkey_and_people_in_their_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = []
    for command in ("start", "answer", "resume"):
        assert 0 == run_pf([command, "--help"])
        shown.append(capsys.readouterr().out)
    assert [True] * 3 == [
        all(o in s for o in ("--web", "--passkey", "--people FILE")) for s in shown
    ]
    assert 0 == run_pf(["status", "--help"])
    assert "--passkey" not in capsys.readouterr().out
