"""``mcp --preflights --answers-from person``: Preflights' rounds answered on the answer page,
every engine step confirmed with the person's passkey (headless Chromium's virtual
authenticator, after a real enrollment), with the SDK's own client in memory; the ADR Preflights
writes passes ``verify --require person``. Preflights' own follow-up rounds are answered on the
page unsigned (docs/decisions.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("preflights")

import anyio
import anyio.to_thread
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from typer.testing import CliRunner

from mcp_servers import connect_memory
from person_passkey import Enrolled, holding_port, software_people
from preflight_fsm.cli import app
from preflight_fsm.people import People
from preflight_fsm.web.html import CSRF_FIELD
from preflight_fsm.web.signing import SIGN_SUFFIX
from preflights_e2e import make_repo
from test_preflights_web import CHOSEN, INTENTION, adr_of, call, fill, link_in
from web_browser import passkey_outcome, submit
from web_pages import fetch

MAX_PAGES = 10


def answer_and_sign(browser: WebDriver, link: str) -> str:
    """The person answers every round, signing each confirm page; the last page's text."""
    browser.get(link)
    for _ in range(MAX_PAGES):
        if browser.find_elements(By.ID, "passkey-button"):
            said = passkey_outcome(browser)
            assert "Signed and recorded." == said, said
            submit(browser, "#passkey-next")
        elif browser.find_elements(By.CSS_SELECTOR, ".decision"):
            return str(browser.find_element(By.TAG_NAME, "main").text)
        else:
            fill(browser, CHOSEN)
            submit(browser)
    raise AssertionError("the page never showed the decision: " + browser.page_source)


def test_the_person_signs_every_engine_step_and_the_adr_passes_verify_require_person(
    browser: WebDriver, ada: Enrolled, tmp_path: Path
) -> None:
    repo, _home = make_repo(tmp_path)
    people = People.load(ada.people)

    async def main() -> tuple[dict[str, Any], str, dict[str, Any]]:
        with anyio.fail_after(120):
            async with connect_memory(
                str(tmp_path / "s.sqlite3"), answers_from="person", preflights=True, people=people
            ) as client:
                first = await call(client, user_intention=INTENTION, repo_path=str(repo))
                link = link_in(first)
                shown = await anyio.to_thread.run_sync(answer_and_sign, browser, link)
                sid = first["session_id"]
                return first, shown, await call(client, user_intention="", session_id=sid)

    first, shown, then = anyio.run(main)
    assert ("ANSWERS_NEED_USER", "completed") == (first["error"]["code"], then["status"])
    assert "Decision documented" in shown
    adr = tmp_path / "adr.md"
    adr.write_text(adr_of(then, repo), encoding="utf-8")
    verified = CliRunner().invoke(
        app, ["verify", "--require", "person", "--people", str(ada.people), str(adr)]
    )
    assert 0 == verified.exit_code, verified.output
    assert "Ada Lovelace" in verified.stdout


def test_answers_an_agent_sends_and_an_unsigned_page_answer_are_refused_under_person(
    tmp_path: Path,
) -> None:
    """Tool-argument answers are refused; on the page the form leads to the confirm page, and a
    sign request without an assertion records nothing: the session still waits for turn 1."""
    repo, _home = make_repo(tmp_path)
    people, origin = software_people(tmp_path)

    async def main() -> tuple[dict[str, Any], int, str, dict[str, Any]]:
        async with connect_memory(
            str(tmp_path / "s.sqlite3"), answers_from="person", preflights=True, people=people
        ) as client:
            first = await call(client, user_intention=INTENTION, repo_path=str(repo))
            sid = first["session_id"]
            agent = await call(
                client, user_intention="", session_id=sid, answers={"auth_strategy": "OAuth"}
            )

            def unsigned() -> tuple[int, str]:
                link = link_in(first)
                form = {CSRF_FIELD: fetch(link).csrf, "action": "answer", "auth_strategy": "OAuth"}
                confirm = fetch(link, form, origin=origin)
                found = re.search(r'data-csrf="([^"]+)"', confirm.text)
                assert found, confirm.text
                reply = fetch(
                    link + SIGN_SUFFIX,
                    body=json.dumps({CSRF_FIELD: found.group(1)}).encode(),
                    origin=origin,
                    headers={"Content-Type": "application/json"},
                )
                return reply.status, json.loads(reply.text)["message"]

            status, message = await anyio.to_thread.run_sync(unsigned)
            return agent, status, message, await call(client, user_intention="", session_id=sid)

    agent, status, message, after = anyio.run(main)
    assert "ANSWERS_NEED_USER" == agent["error"]["code"]
    assert (403, "ANSWERS_NEED_USER") == (status, after["error"]["code"])
    assert "your passkey" in message
    assert "turn 1" in after["error"]["message"]


def test_a_stdio_page_whose_enrolled_port_is_taken_says_so_and_is_served_once_it_is_free(
    tmp_path: Path,
) -> None:
    """Another program (another agent session's server, say) holds the port Ada enrolled on:
    the call says so with the session_id (it raised, and logged a traceback); once the port is
    free the next call gives the page's link there."""
    repo, _home = make_repo(tmp_path)
    people, origin = software_people(tmp_path)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect_memory(
            str(tmp_path / "s.sqlite3"), answers_from="person", preflights=True, people=people
        ) as client:
            with holding_port(origin):
                taken = await call(client, user_intention=INTENTION, repo_path=str(repo))
            sid = taken["session_id"]
            return taken, await call(client, user_intention="", session_id=sid)

    taken, free = anyio.run(main)
    assert "ANSWERS_NEED_USER" == taken["error"]["code"]
    assert f"cannot be served on {origin.removeprefix('http://')}" in taken["error"]["message"]
    assert link_in(free).startswith(f"{origin}/answer/")
