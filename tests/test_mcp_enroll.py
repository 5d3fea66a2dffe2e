"""``mcp --transport http --enroll NAME``: the team server enrolls a passkey on its own public
origin (docs/web.md) and then signs turns with it under ``--answers-from person``, with the SDK's
own client over HTTP, for the engine's tools and Preflights' alike; and the team's whole path to
a decision CI verifies: enroll on the server, ``people add --from`` into the repository, sign,
``verify --require person`` (D274). The person is a software passkey posting what the pages and
their script post (``person_passkey``: the server's process and files are the point here); the
same ceremonies in headless Chromium's virtual authenticator are test_deploy_nginx.py's, through
the proxy, with ``enrolled_through`` and ``signed_turn`` given the browser (D306)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from selenium.webdriver.remote.webdriver import WebDriver
from typer.testing import CliRunner

from mcp_servers import PREFLIGHT_FSM, HttpServer, call, connect_http, free_port, http_server
from person_passkey import enroll_by_form, sign_by_form
from preflight_fsm.cli import app
from preflight_fsm.people import People
from software_authenticator import SoftwareAuthenticator
from test_mcp_person import answer_and_sign, sign_by_post
from test_mcp_web import link_in, type_of
from web_browser import passkey_outcome, virtual_authenticator

Person = WebDriver | SoftwareAuthenticator
"""Who enrolls and signs: headless Chromium (her passkey in its virtual authenticator) or a
software passkey, whose origin names the server's public port."""


@contextmanager
def enrolled_through(
    person: Person,
    tmp_path: Path,
    *extra: str,
    name: str = "Ada",
    public_port: int | None = None,
    front: Callable[[HttpServer], AbstractContextManager[object]] = lambda _: nullcontext(),
) -> Iterator[HttpServer]:
    """A `person` server started with `--enroll NAME` (Ada) and no people file (to be
    tmp_path/people.toml), its public URL on http://localhost:PORT (``public_port``, where
    ``front`` serves it; default: its own, the software passkey's origin's port); she enrolled
    through the one link it printed, her passkey in the browser for the block (``person``: the
    browser); afterwards, the file lists her on that origin, and the link's token was printed
    once and never again (no log line holds it)."""
    browser: WebDriver | None = None
    if isinstance(person, WebDriver):
        browser, port = person, free_port()
    else:
        port = int(person.origin.rsplit(":", 1)[1])
    origin = f"http://localhost:{public_port or port}"
    people = tmp_path / "people.toml"
    options = ("--public-url", f"{origin}/mcp", "--people", str(people), "--enroll", name)
    store = str(tmp_path / "s.sqlite3")
    with (
        http_server(
            store, tmp_path, "enroll", "--answers-from", "person", *options, *extra, port=port
        ) as server,
        front(server),
        nullcontext() if browser is None else virtual_authenticator(browser),  # type: ignore[arg-type]
    ):
        [link] = re.findall(
            re.escape(origin) + r"/enroll/[A-Za-z0-9_-]+", server.stderr.read_text()
        )
        if browser is None:
            assert isinstance(person, SoftwareAuthenticator)
            assert "Enrolled" in enroll_by_form(link, person)
        else:
            browser.get(link)
            assert "Enrolled" in passkey_outcome(browser)
        yield server
        assert 1 == server.stderr.read_text().count(link.rsplit("/", 1)[1])
    [ada] = People.load(people)
    assert (name, "localhost", (origin,)) == (ada.name, ada.rp_id, ada.origins)


def signed_turn(person: Person, url: str) -> dict[str, Any]:
    """A session started at ``url``, its turns answered on the page and signed (by ``person``);
    the outcome."""

    async def main() -> dict[str, Any]:
        with anyio.fail_after(120):
            async with connect_http(url) as client:
                first = await call(client, "require_clarification", user_intention="Add a thing")
                page = link_in(first["error"]["recovery_hint"])
                if isinstance(person, WebDriver):
                    await anyio.to_thread.run_sync(answer_and_sign, person, page)
                else:
                    await anyio.to_thread.run_sync(sign_by_post, person, page)
                sid = first["session_id"]
                return await call(client, "require_clarification", session_id=sid)

    return anyio.run(main)


def test_a_person_server_with_nobody_enrolled_enrolls_on_its_origin_then_signs_each_turn(
    tmp_path: Path,
) -> None:
    """A turn is then answered on the page and signed with the new passkey: user_passkey."""
    ada = SoftwareAuthenticator(origin=f"http://localhost:{free_port()}")
    with enrolled_through(ada, tmp_path) as server:
        then = signed_turn(ada, server.url)
    assert ("completed", ("MySQL", "user_passkey")) == (then["status"], type_of(then))


def test_the_team_path_from_enrolling_on_the_server_to_verify_in_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mcp --preflights --transport http --enroll alice --answers-from person`: alice enrolls
    through the printed link; `people add alice --from` the server's people file brings her
    entry into the repository's; a session she answers and signs on the page completes; and
    `verify --require person`, run in the repository with nothing but it, exits 0 on the ADR
    written (D274)."""
    from preflights_e2e import make_repo
    from test_preflights_web import CHOSEN, INTENTION
    from test_preflights_web import call as call_preflights
    from test_preflights_web import link_in as preflights_link

    repo, _home = make_repo(tmp_path)
    people = tmp_path / "people.toml"
    extra = ("--preflights", "--repo-root", str(tmp_path))
    alice = SoftwareAuthenticator(origin=f"http://localhost:{free_port()}")
    with enrolled_through(alice, tmp_path, *extra, name="alice") as server:
        monkeypatch.chdir(repo)  # in-process: `verify` below is the process CI runs
        added = CliRunner().invoke(app, ["people", "add", "alice", "--from", str(people)])
        assert 0 == added.exit_code, added.output

        async def main() -> dict[str, Any]:
            with anyio.fail_after(120):
                async with connect_http(server.url) as client:
                    first = await call_preflights(
                        client, user_intention=INTENTION, repo_path=str(repo)
                    )
                    page = preflights_link(first)
                    await anyio.to_thread.run_sync(sign_by_form, page, CHOSEN, alice)
                    sid = first["session_id"]
                    return await call_preflights(client, user_intention="", session_id=sid)

        then = anyio.run(main)
    assert "completed" == then["status"]
    adr = next(a["path"] for a in then["artifacts_created"] if a["type"] == "adr")
    verified = run_in(repo, "verify", "--require", "person", adr)
    assert 0 == verified.returncode, verified.stdout + verified.stderr
    assert "alice" in verified.stdout


def run_in(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`preflight-fsm ARGUMENTS` run in ``cwd``, its outputs captured."""
    return subprocess.run(
        [PREFLIGHT_FSM, *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
