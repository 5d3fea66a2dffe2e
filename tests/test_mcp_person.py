"""``mcp --answers-from person``: every turn answered on the answer page and confirmed with the
person's passkey, with the SDK's own client over stdio and HTTP (a process each) and in memory;
the decision then passes ``verify --require person``. In headless Chromium with its virtual
authenticator (after a real enrollment) where the ceremony in a browser is the point (URL
elicitation in memory, a rewritten challenge); where the transport or the era is, with a software
passkey that posts what the page's script posts (``person_passkey.sign_by_form``)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from typer.testing import CliRunner, Result

from mcp_servers import (
    call,
    connect_http,
    connect_memory,
    connect_stdio,
    http_server,
)
from person_passkey import Enrolled, holding_port, sign_by_form, software_passkey, software_people
from preflight_fsm import ClarificationMachine
from preflight_fsm.cli import app
from preflight_fsm.mcp.tokens import add_token
from preflight_fsm.passkeys import step_challenge
from preflight_fsm.people import People
from preflight_fsm.store import Sessions
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import PageListener
from preflight_fsm.web.signing import SignedAnswerPage
from software_authenticator import SoftwareAuthenticator
from test_mcp_web import MYSQL, Person, link_in, type_of
from web_browser import passkey_outcome, submit


def answer_and_sign(browser: WebDriver, link: str) -> None:
    """The person: Database, signed; then MySQL, signed."""
    browser.get(link)
    browser.find_element(By.CSS_SELECTOR, "label[for=change_category-2]").click()
    submit(browser)
    assert "Signed and recorded." == passkey_outcome(browser)
    submit(browser, "#passkey-next")
    browser.find_element(By.CSS_SELECTOR, "label[for=db_type-1]").click()
    submit(browser)
    assert "finished" in passkey_outcome(browser)


def sign_by_post(ada: SoftwareAuthenticator, link: str) -> None:
    """The person without a browser: Database, signed; then MySQL, signed (``answer_and_sign``'s
    turns, posted as the page and its script post them)."""
    said, _ = sign_by_form(link, MYSQL, ada)
    assert ["Signed and recorded.", True] == [said[0], "finished" in said[-1]], said


def _run(*arguments: str) -> Result:
    """The command line, run in the test's process (no process boundary is tested here: the
    exit codes themselves are test_verify.py's)."""
    return CliRunner().invoke(app, list(arguments))


def test_over_stdio_the_person_signs_every_turn_and_verify_requires_person_passes(
    tmp_path: Path, errlog: TextIO
) -> None:
    """A client without URL mode gets the link naming the passkey; the person answers and signs
    each turn; the call with the session_id returns the outcome, every step user_passkey, and
    the decision `show --decision` prints passes `verify --require person`."""
    store = str(tmp_path / "s.sqlite3")
    ada, people = software_passkey(tmp_path)
    options = ("--answers-from", "person", "--people", str(people))

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        with anyio.fail_after(120):
            async with connect_stdio(store, tmp_path, errlog, extra=options) as client:
                first = await call(client, "require_clarification", user_intention="Add a thing")
                link = link_in(first["error"]["recovery_hint"])
                await anyio.to_thread.run_sync(sign_by_post, ada, link)
                sid = first["session_id"]
                return first, await call(client, "require_clarification", session_id=sid)

    first, then = anyio.run(main)
    assert "answers_need_user" == first["error"]["code"]
    assert "passkey" in first["error"]["recovery_hint"]
    assert ("completed", ("MySQL", "user_passkey")) == (then["status"], type_of(then))
    decision = tmp_path / "decision.md"
    decision.write_text(_run("show", first["session_id"], "--decision", "--store", store).stdout)
    verified = _run("verify", "--require", "person", "--people", str(people), str(decision))
    assert 0 == verified.exit_code, verified.output


@pytest.mark.parametrize(("mode", "answering"), [("auto", "browser"), ("legacy", "software")])
def test_a_client_with_url_elicitation_shows_the_person_the_signing_page(
    request: pytest.FixtureRequest, tmp_path: Path, mode: str, answering: str
) -> None:
    """In memory: the server the stdio command serves (its loopback listener on the port Ada
    enrolled on), built in the test's process; the stdio process is the test above's. Ada signs
    in the browser once; in the legacy era, whose difference is the elicitation request and not
    the page, with the software passkey."""
    if answering == "browser":
        enrolled: Enrolled = request.getfixturevalue("ada")
        person = Person(request.getfixturevalue("browser"), answer_and_sign)
        people = People.load(enrolled.people)
    else:
        software, path = software_passkey(tmp_path)
        person = Person(None, lambda _browser, link: sign_by_post(software, link))
        people = People.load(path)

    async def main() -> dict[str, Any]:
        store = str(tmp_path / "s.sqlite3")
        with anyio.fail_after(120):
            async with connect_memory(
                store, mode=mode, elicitation=person, answers_from="person", people=people
            ) as client:
                return await call(client, "require_clarification", user_intention="Add a thing")

    outcome = anyio.run(main)
    assert ("completed", 1) == (outcome["status"], len(person.shown))
    assert ("MySQL", "user_passkey") == type_of(outcome)


def test_answers_an_agent_sends_are_refused_under_person(tmp_path: Path) -> None:
    """Tool arguments record nothing; the error names the page and the passkey."""
    people, _origin = software_people(tmp_path)  # no browser: nobody comes to the page

    async def main() -> dict[str, Any]:
        store = str(tmp_path / "s.sqlite3")
        async with connect_memory(store, answers_from="person", people=people) as client:
            return await call(
                client,
                "require_clarification",
                user_intention="Add a thing",
                answers={"change_category": "Database"},
            )

    refused = anyio.run(main)
    assert "answers_need_user" == refused["error"]["code"]
    assert "confirmed with their passkey (--answers-from person)" in refused["error"]["message"]
    assert "answer page" in refused["error"]["recovery_hint"]


def test_over_http_the_signing_page_is_a_route_and_steps_record_the_caller_as_principal(
    tmp_path: Path,
) -> None:
    """Over HTTP with tokens: the page is served at the public URL's origin (where Ada
    enrolled); each signed step records user_passkey, Ada's proof, and as principal the
    authenticated caller that asked for the link (docs/decisions.md)."""
    tokens = tmp_path / "tokens.toml"
    alice = add_token(tokens, "alice")
    ada, people = software_passkey(tmp_path)
    port = int(ada.origin.rsplit(":", 1)[1])
    public = f"{ada.origin}/mcp"
    person = ("--answers-from", "person", "--people", str(people))
    extra = ("--public-url", public, "--tokens", str(tokens), *person)
    store = str(tmp_path / "s.sqlite3")
    with http_server(store, tmp_path, "person", *extra, port=port) as server:

        async def main() -> tuple[dict[str, Any], dict[str, Any]]:
            with anyio.fail_after(120):
                async with connect_http(server.url, token=alice) as client:
                    first = await call(
                        client, "require_clarification", user_intention="Add a thing"
                    )
                    link = link_in(first["error"]["recovery_hint"])
                    assert link.startswith(f"{ada.origin}/answer/")
                    await anyio.to_thread.run_sync(sign_by_post, ada, link)
                    sid = first["session_id"]
                    then = await call(client, "require_clarification", session_id=sid)
                    return then, await call(client, "get_session", session_id=sid)

        then, shown = anyio.run(main)
    assert "Traceback" not in server.stderr.read_text()
    assert ("completed", ("MySQL", "user_passkey")) == (then["status"], type_of(then))
    steps = [(s["answered_by"], s["principal"], s["proof"]["person"]) for s in shown["steps"]]
    assert [("user_passkey", "alice", "Ada Lovelace")] * 2 == steps


def test_an_assertion_over_another_sessions_challenge_is_refused_and_the_page_says_so(
    browser: WebDriver, ada: Enrolled
) -> None:
    """Ada's own passkey, made to sign another session's challenge (the page's options
    rewritten in the browser): the server refuses it as wrong_challenge, the page shows that
    nothing was recorded, and neither session has a step."""
    sessions = Sessions(MemoryStore())
    page = SignedAnswerPage(sessions, People.load(ada.people))
    other = sessions.create(ClarificationMachine("Add a thing")).id
    this = sessions.create(ClarificationMachine("Add a thing")).id
    machine, _ = sessions.load(other)
    moved = step_challenge(machine, other, {"change_category": "Database"})
    with PageListener(page, port=ada.port):
        link = page.link(this)
        assert link is not None
        browser.get(link)
        browser.find_element(By.CSS_SELECTOR, "label[for=change_category-2]").click()
        submit(browser)
        browser.execute_script(
            "var box = document.getElementById('passkey');"
            "var options = JSON.parse(box.dataset.options);"
            "options.challenge = arguments[0];"
            "box.dataset.options = JSON.stringify(options);",
            base64.urlsafe_b64encode(moved).decode().rstrip("="),
        )
        said = passkey_outcome(browser)
    assert "Nothing was recorded: the passkey was refused (wrong_challenge)" in said
    assert (0, 0) == tuple(len(sessions.load(s)[0].steps) for s in (this, other))


def test_a_stdio_page_whose_enrolled_port_is_taken_says_so_and_is_served_once_it_is_free(
    tmp_path: Path,
) -> None:
    """Another program holds the port Ada enrolled on: the call says so with the session_id
    (it was an internal_error naming only OSError); once the port is free the next call gives
    the page's link there."""
    people, origin = software_people(tmp_path)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        store = str(tmp_path / "s.sqlite3")
        async with connect_memory(store, answers_from="person", people=people) as client:
            with holding_port(origin):
                taken = await call(client, "require_clarification", user_intention="Add a thing")
            sid = taken["session_id"]
            return taken, await call(client, "require_clarification", session_id=sid)

    taken, free = anyio.run(main)
    assert "answers_need_user" == taken["error"]["code"]
    assert f"cannot be served on {origin.removeprefix('http://')}" in taken["error"]["message"]
    assert link_in(free["error"]["recovery_hint"]).startswith(f"{origin}/answer/")
