"""``mcp --answers-from web``: every turn answered by the person on the answer page, with the
SDK's own client over stdio and HTTP (a process each: the loopback listener of the stdio process,
the route of the HTTP one) and in memory (the server the stdio command serves, its loopback
listener included, built in the test's process), in both protocol eras. The person answers in
headless Chromium where the page in a browser is the point (URL elicitation in memory; the page's
own browser tests are test_web_browser.py); where the transport is, the page's form is posted as
the browser posts it (``web_pages.answer_by_form``: a browser's page costs about 0.5 s of CPU)."""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import call, connect_http, connect_memory, connect_stdio, http_server
from web_browser import submit
from web_pages import answer_by_form

WEB = ("--answers-from", "web")
MYSQL = {"change_category": "Database", "db_type": "MySQL"}
"""What the person answers: Database, then MySQL."""


def answer_in_browser(browser: WebDriver, link: str) -> None:
    """The person, in the browser: Database, then MySQL (``MYSQL``)."""
    browser.get(link)
    browser.find_element(By.CSS_SELECTOR, "label[for=change_category-2]").click()
    submit(browser)
    browser.find_element(By.CSS_SELECTOR, "label[for=db_type-1]").click()
    submit(browser)


def answer_by_post(_browser: object, link: str) -> None:
    """The person without a browser: ``MYSQL``, each turn's form posted as the browser posts it."""
    answer_by_form(link, MYSQL)


def link_in(hint: str) -> str:
    found = re.search(r"http://\S+/answer/[A-Za-z0-9_-]+", hint)
    assert found, hint
    return found.group(0)


def type_of(outcome: dict[str, Any]) -> tuple[str, str]:
    """The decided Type and who answered it."""
    fields = {f["name"]: f["value"] for f in outcome["patch"]["fields"]}
    by = {d["name"]: d["answered_by"] for d in outcome["decided_by"]}
    return fields["Type"], by["Type"]


async def link_then_outcome(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """A client without URL mode: the first call's link answered by the person (its form
    posted), then the call with the session_id; both results."""
    first = await call(client, "require_clarification", user_intention="Add a thing")
    link = link_in(first["error"]["recovery_hint"])
    await anyio.to_thread.run_sync(answer_by_post, None, link)
    then = await call(client, "require_clarification", session_id=first["session_id"])
    return first, then


class Person:
    """A URL-mode elicitation callback: the client shows the URL and the person answers
    (with ``answer``, given the browser and the URL)."""

    def __init__(
        self, browser: WebDriver | None, answer: Callable[[Any, str], object] = answer_in_browser
    ) -> None:
        self.browser = browser
        self.answer = answer
        self.shown: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        self.shown.append(params.url)
        await anyio.to_thread.run_sync(self.answer, self.browser, params.url)
        return types.ElicitResult(action="accept")


def test_a_client_without_url_elicitation_gets_the_link_and_later_the_outcome(
    tmp_path: Path, errlog: TextIO
) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        store = str(tmp_path / "s.sqlite3")
        async with connect_stdio(store, tmp_path, errlog, extra=WEB) as client:
            return await link_then_outcome(client)

    first, then = anyio.run(main)
    assert "answers_need_user" == first["error"]["code"]
    assert ("completed", ("MySQL", "user_web")) == (then["status"], type_of(then))


@pytest.mark.parametrize(
    ("mode", "transport", "answering"),
    [("auto", "memory", "browser"), ("legacy", "memory", "form"), ("legacy", "stdio", "form")],
)
def test_a_client_with_url_elicitation_shows_the_person_the_page(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    errlog: TextIO,
    mode: str,
    transport: str,
    answering: str,
) -> None:
    """In both eras; the URL elicitation crosses a real stdio pipe in the legacy era too
    (test_preflights_person_processes.py sends one over stdio in the 2026-07-28 era). The person
    answers in the browser once; where the era or the pipe is the point, by posting the form."""
    if answering == "browser":
        person = Person(request.getfixturevalue("browser"))
    else:
        person = Person(None, answer_by_post)

    async def main() -> dict[str, Any]:
        store = str(tmp_path / "s.sqlite3")
        with anyio.fail_after(120):
            if transport == "stdio":
                connected = connect_stdio(
                    store, tmp_path, errlog, mode=mode, elicitation=person, extra=WEB
                )
            else:
                connected = connect_memory(store, mode=mode, elicitation=person, answers_from="web")
            async with connected as client:
                return await call(client, "require_clarification", user_intention="Add a thing")

    outcome = anyio.run(main)
    assert ("completed", 1) == (outcome["status"], len(person.shown))
    assert ("MySQL", "user_web") == type_of(outcome)


def test_answers_an_agent_sends_are_refused_under_web(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        store = str(tmp_path / "s.sqlite3")
        async with connect_memory(store, answers_from="web") as client:
            return await call(
                client,
                "require_clarification",
                user_intention="Add a thing",
                answers={"change_category": "Database"},
            )

    assert "answers_need_user" == anyio.run(main)["error"]["code"]


def test_a_poll_after_turn_1_says_what_is_recorded_and_what_waits(tmp_path: Path) -> None:
    """Without a browser: turn 1 answered on the page (a plain form POST), the agent's call
    with the session_id says turn 1 is recorded, how, and that turn 2 waits for the person."""

    def answer_turn_1(link: str) -> None:
        page = urllib.request.urlopen(link, timeout=30).read().decode()
        found = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert found, page
        body = urllib.parse.urlencode(
            {"csrf_token": found.group(1), "change_category": "Database"}
        ).encode()
        origin = link.split("/answer/")[0]
        request = urllib.request.Request(link, body, {"Origin": origin}, method="POST")
        urllib.request.urlopen(request, timeout=30).close()  # follows to turn 2's page

    async def main() -> dict[str, Any]:
        store = str(tmp_path / "s.sqlite3")
        with anyio.fail_after(120):
            async with connect_memory(store, answers_from="web") as client:
                first = await call(client, "require_clarification", user_intention="Add a thing")
                link = link_in(first["error"]["recovery_hint"])
                await anyio.to_thread.run_sync(answer_turn_1, link)
                sid = first["session_id"]
                return await call(client, "require_clarification", session_id=sid)

    polled = anyio.run(main)
    assert (
        "turn 1 recorded (answered through this server's answer page); turn 2 waits for the "
        "person on the answer page (--answers-from web)"
    ) == polled["error"]["message"]


def test_over_http_the_page_is_a_route_of_the_server(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    with http_server(store, tmp_path, "web", *WEB) as server:

        async def main() -> tuple[dict[str, Any], dict[str, Any]]:
            async with connect_http(server.url) as client:
                return await link_then_outcome(client)

        first, then = anyio.run(main)
    assert link_in(first["error"]["recovery_hint"]).startswith(server.url.removesuffix("/mcp"))
    assert ("completed", ("MySQL", "user_web")) == (then["status"], type_of(then))
