"""``mcp --preflights --answers-from person`` end to end across real processes: the server is a
`preflight-fsm mcp` process (stdio, spawned by the SDK's own stdio client; or HTTP, with its
tokens and Origin/Host checks, reached by the SDK's streamable-HTTP client), the person answers
and signs with Ada's software passkey, posting what the page and its script post
(``person_passkey.sign_by_form``; the rounds and the ceremony in headless Chromium are
``test_preflights_person.py``'s and the cancelled ceremony's here), and the ADR Preflights writes
into a real git repository is checked by the `preflight-fsm verify` process (the HTTP test's ADR
by the same command run in the test's process).

``test_preflights_person.py`` proves the same rounds with the client in memory; what only these
tests can show is the process boundary: the stdio server's own loopback listener serving the
signing page on the port Ada enrolled on, the link travelling as a URL elicitation or in the
result's hint, the HTTP server's route behind its token, and the files on disk that a reviewer
or CI then verifies. Each test costs seconds (a server process; the last a browser); there are
three, one per way the person is reached or refused. The 2025-era (legacy) URL elicitation is not
repeated here (about 5 s of CPU more): its round is the same code in process or not, proved for
Preflights in memory (``test_preflights_web.py``) and across the stdio boundary for the engine's
tools (``test_mcp_person.py``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("preflights")

import anyio
import anyio.to_thread
from selenium.webdriver.remote.webdriver import WebDriver
from typer.testing import CliRunner

from mcp_servers import PREFLIGHT_FSM, connect_http, connect_stdio, http_server
from person_passkey import Enrolled, sign_by_form, software_passkey
from preflight_fsm.cli import app
from preflight_fsm.mcp.tokens import add_token
from preflights_e2e import make_repo
from test_mcp_web import Person
from test_preflights_web import CHOSEN, INTENTION, call, fill, link_in
from web_browser import passkey_outcome, submit, virtual_authenticator

TIMEOUT = 180  # seconds for a whole session: two shared cores, a browser and two processes


def artifacts(result: dict[str, Any], repo: Path) -> dict[str, Path]:
    """The files a completed result lists, by type (adr, task), as paths in ``repo``."""
    return {a["type"]: repo / a["path"] for a in result["artifacts_created"]}


def verify(people: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    """`preflight-fsm verify --require person` on ``paths`` with Ada's people file."""
    return subprocess.run(
        [PREFLIGHT_FSM, "verify", "--require", "person", "--people", str(people)]
        + [str(path) for path in paths],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_over_stdio_a_url_elicitation_client_gets_the_signing_page_and_the_adr_verifies(
    tmp_path: Path, errlog: TextIO
) -> None:
    """The stdio server's loopback listener serves the link the client receives as a URL
    elicitation; Ada answers and signs every round; the call completes with the ADR and task
    written, and `verify --require person` on the ADR exits 0 naming her."""
    repo, _home = make_repo(tmp_path)
    ada, people = software_passkey(tmp_path)
    person = Person(None, lambda _browser, link: sign_by_form(link, CHOSEN, ada))
    store = str(tmp_path / "s.sqlite3")
    options = ("--preflights", "--answers-from", "person", "--people", str(people))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            async with connect_stdio(
                store, tmp_path, errlog, elicitation=person, extra=options
            ) as client:
                return await call(client, user_intention=INTENTION, repo_path=str(repo))

    outcome = anyio.run(main)
    assert "completed" == outcome["status"], outcome
    [shown] = person.shown  # one link: the page leads from round to round
    assert shown.startswith(f"{ada.origin}/answer/")
    written = artifacts(outcome, repo)
    assert (True, True) == (written["adr"].is_file(), written["task"].is_file())
    verified = verify(people, written["adr"], written["task"])
    assert 0 == verified.returncode, verified.stdout + verified.stderr
    assert "Ada Lovelace" in verified.stdout


def test_over_http_a_client_without_url_elicitation_gets_the_link_then_the_verified_outcome(
    tmp_path: Path,
) -> None:
    """A token-protected HTTP server at the origin Ada enrolled on: the client, which declares
    no URL elicitation, gets the link in the result's hint; once Ada has answered and signed on
    the server's own route, the call with the session_id returns the outcome, and the ADR it
    wrote passes `verify --require person`."""
    repo, _home = make_repo(tmp_path)
    tokens = tmp_path / "tokens.toml"
    alice = add_token(tokens, "alice")
    ada, people = software_passkey(tmp_path)
    port = int(ada.origin.rsplit(":", 1)[1])
    served = ("--preflights", "--repo-root", str(tmp_path), "--public-url", f"{ada.origin}/mcp")
    person = ("--tokens", str(tokens), "--answers-from", "person", "--people", str(people))
    options = (*served, *person)
    with http_server(
        str(tmp_path / "s.sqlite3"), tmp_path, "person", *options, port=port
    ) as server:

        async def main() -> tuple[dict[str, Any], dict[str, Any]]:
            with anyio.fail_after(TIMEOUT):
                async with connect_http(server.url, token=alice) as client:
                    first = await call(client, user_intention=INTENTION, repo_path=str(repo))
                    link = link_in(first)
                    await anyio.to_thread.run_sync(sign_by_form, link, CHOSEN, ada)
                    sid = first["session_id"]
                    return first, await call(client, user_intention="", session_id=sid)

        first, then = anyio.run(main)
    assert "Traceback" not in server.stderr.read_text()
    assert ("ANSWERS_NEED_USER", "completed") == (first["error"]["code"], then["status"])
    assert link_in(first).startswith(f"{ada.origin}/answer/")
    adr = artifacts(then, repo)["adr"]
    verified = CliRunner().invoke(  # in-process: the stdio test runs verify as a process
        app, ["verify", "--require", "person", "--people", str(people), str(adr)]
    )
    assert 0 == verified.exit_code, verified.output


def test_a_round_whose_passkey_ceremony_is_cancelled_records_and_writes_nothing(
    browser: WebDriver, enrolled: Enrolled, tmp_path: Path, errlog: TextIO
) -> None:
    """Ada's passkey is in the browser but she cancels its prompt (her authenticator fails
    user verification): the page says nothing was recorded, the session still waits for its
    first turn, and the repository holds no new file: no ADR or task exists to verify."""
    repo, _home = make_repo(tmp_path)
    store = str(tmp_path / "s.sqlite3")
    options = ("--preflights", *enrolled.options)

    def answer_then_cancel(link: str) -> str:
        with virtual_authenticator(browser, user_verified=False):  # type: ignore[arg-type]
            browser.add_credential(enrolled.credential)
            browser.get(link)
            fill(browser, CHOSEN)
            submit(browser)
            return passkey_outcome(browser)

    async def main() -> tuple[str, dict[str, Any]]:
        with anyio.fail_after(TIMEOUT):
            async with connect_stdio(store, tmp_path, errlog, extra=options) as client:
                first = await call(client, user_intention=INTENTION, repo_path=str(repo))
                said = await anyio.to_thread.run_sync(answer_then_cancel, link_in(first))
                sid = first["session_id"]
                return said, await call(client, user_intention="", session_id=sid)

    said, after = anyio.run(main)
    assert said.startswith("Nothing was recorded: the passkey was not given"), said
    assert "ANSWERS_NEED_USER" == after["error"]["code"]
    assert "turn 1" in after["error"]["message"]
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "" == status.stdout
