"""``mcp --preflights --answers-from web``: Preflights' rounds answered by the person on the answer
page, with the SDK's own client in memory (the server the stdio command serves, its loopback
listener included), over stdio (a process) and over HTTP (a process). The person answers in
headless Chromium where the page in a browser is the point (the rounds on the page, a refused
answer shown, URL elicitation); where the transport, the era or the policy is, each round's form
is posted as the browser posts it (``web_pages.answer_by_form``)."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("preflights")

import anyio
import anyio.to_thread
from mcp import Client
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import connect_http, connect_memory, connect_stdio, http_server
from preflight_fsm.mcp.policy import AnswersFrom
from preflights_e2e import CORE_ANSWERS, make_repo
from test_mcp_web import Person
from web_browser import submit
from web_pages import answer_by_form

INTENTION = "Add login to the admin dashboard"  # Authentication by keyword; nothing pre-filled
WEB = ("--preflights", "--answers-from", "web")
CHOSEN = {"auth_strategy": "Other (specify)", "auth_strategy__other": "Passkeys", **CORE_ANSWERS}
"""The person's answers, by question id: Other (specify) with its text, then Preflights' own."""
MAX_PAGES = 6


_ANSWERABLE = """
var answers = arguments[0], own = Object.prototype.hasOwnProperty, labels = [], texts = [];
document.querySelectorAll("input[type=radio]").forEach(function (choice) {
  if (own.call(answers, choice.name) && answers[choice.name] === choice.value) {
    labels.push(document.querySelector("label[for='" + CSS.escape(choice.id) + "']"));
  }
});
document.querySelectorAll("input[type=text]").forEach(function (text) {
  if (own.call(answers, text.name)) { texts.push([text, answers[text.name]]); }
});
return [labels, texts];
"""
"""The labels of the page's choices ``answers`` names and its text inputs with their answers:
found in one look at the page, not a round trip to the browser per attribute of every input."""


def fill(browser: WebDriver, answers: dict[str, str]) -> None:
    """Choose or type each answer the page asks for (by question id)."""
    labels, texts = browser.execute_script(_ANSWERABLE, answers)
    for label in labels:
        assert label is not None, "a choice the page offers has no label to click"
        label.click()
    for text, value in texts:
        text.clear()
        text.send_keys(value)


def answer_in_browser(browser: WebDriver, link: str, answers: dict[str, str] = CHOSEN) -> str:
    """The person answers every round with ``answers``; the last page's text."""
    browser.get(link)
    for _ in range(MAX_PAGES):
        if browser.find_elements(By.CSS_SELECTOR, "[role=status]"):
            return str(browser.find_element(By.TAG_NAME, "main").text)
        fill(browser, answers)
        submit(browser)
    raise AssertionError("the page never showed the decision: " + browser.page_source)


def answer_by_post(link: str) -> str:
    """The person without a browser: ``CHOSEN``, each round's form posted as the browser posts
    it; the last page's HTML."""
    return answer_by_form(link, CHOSEN, max_pages=MAX_PAGES)


def link_in(result: dict[str, Any]) -> str:
    found = re.search(r"http://\S+/answer/[A-Za-z0-9_-]+", result["error"]["recovery_hint"])
    assert found, result
    return found.group(0)


def adr_of(result: dict[str, Any], repo: Path) -> str:
    adr: str = next(a["path"] for a in result["artifacts_created"] if a["type"] == "adr")
    return (repo / adr).read_text(encoding="utf-8")


async def link_then_outcome(
    client: Client, repo: Path, answer: Callable[[str], str] = answer_by_post
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A client without URL mode: the link, the person's last page (``answer``: given the
    link), then the outcome."""
    first = await call(client, user_intention=INTENTION, repo_path=str(repo))
    shown = await anyio.to_thread.run_sync(answer, link_in(first))
    then = await call(client, user_intention="", session_id=first["session_id"])
    return first, shown, then


async def call(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("require_clarification", arguments)
    structured: dict[str, Any] = result.structured_content
    return structured


def _rounds_on_the_page_in_memory(
    answer: Callable[[str], str], tmp_path: Path, repo: Path, answers_from: AnswersFrom
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """``link_then_outcome`` against ``mcp --preflights --answers-from ANSWERS_FROM`` in memory."""

    async def main() -> tuple[dict[str, Any], str, dict[str, Any]]:
        with anyio.fail_after(120):
            async with connect_memory(
                str(tmp_path / "s.sqlite3"), answers_from=answers_from, preflights=True
            ) as client:
                return await link_then_outcome(client, repo, answer)

    return anyio.run(main)


def test_the_person_answers_preflights_rounds_on_the_page_and_the_adr_says_so(
    browser: WebDriver, tmp_path: Path
) -> None:
    repo, _home = make_repo(tmp_path)
    first, shown, then = _rounds_on_the_page_in_memory(
        partial(answer_in_browser, browser), tmp_path, repo, "web"
    )
    assert "ANSWERS_NEED_USER" == first["error"]["code"]
    assert "completed" == then["status"]
    assert "Passkeys" in adr_of(then, repo)
    assert "user_web" in adr_of(then, repo)
    assert "Decision documented" in shown


@pytest.mark.parametrize(("mode", "answering"), [("auto", "browser"), ("legacy", "form")])
def test_a_client_with_url_elicitation_shows_the_person_preflights_page(
    request: pytest.FixtureRequest, tmp_path: Path, mode: str, answering: str
) -> None:
    """In both eras: the person answers in the browser once; in the legacy era, whose difference
    is the elicitation request and not the page, by posting the form."""
    repo, _home = make_repo(tmp_path)
    if answering == "browser":
        person = Person(request.getfixturevalue("browser"), answer_in_browser)
    else:
        person = Person(None, lambda _browser, link: answer_by_post(link))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(120):
            async with connect_memory(
                str(tmp_path / "s.sqlite3"),
                mode=mode,
                elicitation=person,
                answers_from="web",
                preflights=True,
            ) as client:
                return await call(client, user_intention=INTENTION, repo_path=str(repo))

    outcome = anyio.run(main)
    assert ("completed", 1) == (outcome["status"], len(person.shown))
    assert "user_web" in adr_of(outcome, repo)


def test_answers_an_agent_sends_are_refused_under_web(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with connect_memory(
            str(tmp_path / "s.sqlite3"), answers_from="web", preflights=True
        ) as client:
            first = await call(client, user_intention=INTENTION, repo_path=str(tmp_path))
            return await call(
                client,
                user_intention="",
                session_id=first.get("session_id"),
                answers={"auth_strategy": "OAuth"},
            )

    make_repo(tmp_path)
    assert "ANSWERS_NEED_USER" == anyio.run(main)["error"]["code"]


def test_a_poll_after_turn_1_says_what_is_recorded_and_what_waits(tmp_path: Path) -> None:
    """Without a browser: turn 1 answered on the page (a plain form POST), the agent's call
    with the session_id says what `mcp` says: turn 1 recorded, how, and turn 2 waiting."""
    repo, _home = make_repo(tmp_path)

    def answer_turn_1(link: str) -> None:
        page = urllib.request.urlopen(link, timeout=30).read().decode()
        found = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert found, page
        body = urllib.parse.urlencode({"csrf_token": found.group(1), "auth_strategy": "OAuth"})
        origin = link.split("/answer/")[0]
        request = urllib.request.Request(link, body.encode(), {"Origin": origin}, method="POST")
        urllib.request.urlopen(request, timeout=30).close()  # follows to turn 2's page

    async def main() -> dict[str, Any]:
        with anyio.fail_after(120):
            async with connect_memory(
                str(tmp_path / "s.sqlite3"), answers_from="web", preflights=True
            ) as client:
                first = await call(client, user_intention=INTENTION, repo_path=str(repo))
                await anyio.to_thread.run_sync(answer_turn_1, link_in(first))
                sid = first["session_id"]
                return await call(client, user_intention="", session_id=sid)

    polled = anyio.run(main)
    assert (
        "turn 1 recorded (answered through this server's answer page); turn 2 waits for the "
        "person on the answer page (--answers-from web)"
    ) == polled["error"]["message"]


def test_a_refused_answer_is_shown_on_the_page_and_nothing_is_recorded(
    browser: WebDriver, tmp_path: Path
) -> None:
    repo, _home = make_repo(tmp_path)

    async def main() -> tuple[str, str]:
        async with connect_memory(
            str(tmp_path / "s.sqlite3"), answers_from="web", preflights=True
        ) as client:
            first = await call(client, user_intention=INTENTION, repo_path=str(repo))

            def refused_then_fixed() -> tuple[str, str]:
                browser.get(link_in(first))
                fill(browser, {**CHOSEN, "auth_strategy__other": "Pass\u202ekeys"})
                submit(browser)
                problem = browser.find_element(By.CSS_SELECTOR, "[role=alert]").text
                fill(browser, CHOSEN)
                submit(browser)
                return problem, browser.find_element(By.TAG_NAME, "main").text

            return await anyio.to_thread.run_sync(refused_then_fixed)

    problem, after = anyio.run(main)
    assert "Not recorded" in problem
    assert "Question turn" in after or "Decision documented" in after


def test_over_stdio_the_page_is_served_by_a_loopback_listener(
    tmp_path: Path, errlog: TextIO
) -> None:
    repo, _home = make_repo(tmp_path)

    async def main() -> tuple[dict[str, Any], str, dict[str, Any]]:
        with anyio.fail_after(120):
            store = str(tmp_path / "s.sqlite3")
            async with connect_stdio(store, tmp_path, errlog, extra=WEB) as client:
                return await link_then_outcome(client, repo)

    first, _shown, then = anyio.run(main)
    assert link_in(first).startswith("http://localhost:")
    assert ("completed", True) == (then["status"], "user_web" in adr_of(then, repo))


def test_over_http_the_page_is_a_route_of_the_server(tmp_path: Path) -> None:
    repo, _home = make_repo(tmp_path)
    store = str(tmp_path / "s.sqlite3")
    with http_server(store, tmp_path, "web", *WEB, "--repo-root", str(tmp_path)) as server:

        async def main() -> tuple[dict[str, Any], str, dict[str, Any]]:
            with anyio.fail_after(120):
                async with connect_http(server.url) as client:
                    return await link_then_outcome(client, repo)

        first, _shown, then = anyio.run(main)
    assert link_in(first).startswith(server.url.removesuffix("/mcp"))
    assert ("completed", True) == (then["status"], "user_web" in adr_of(then, repo))


def test_under_user_a_client_without_forms_gets_the_pages_link(tmp_path: Path) -> None:
    repo, _home = make_repo(tmp_path)
    first, _shown, then = _rounds_on_the_page_in_memory(answer_by_post, tmp_path, repo, "user")
    assert ("ANSWERS_NEED_USER", "completed") == (first["error"]["code"], then["status"])
    assert "user_web" in adr_of(then, repo)


def test_a_used_link_or_a_cross_site_post_changes_nothing(tmp_path: Path) -> None:
    """Without a browser: a POST from another origin or without the form's token is refused,
    the person's own answer takes the round, and the spent link then says so."""
    repo, _home = make_repo(tmp_path)

    def post(link: str, fields: dict[str, str], origin: str) -> int:
        body = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(link, body, {"Origin": origin}, method="POST")
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    def status(link: str) -> int:
        try:
            with urllib.request.urlopen(link, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    async def main() -> tuple[int, ...]:
        async with connect_memory(
            str(tmp_path / "s.sqlite3"), answers_from="web", preflights=True
        ) as client:
            first = await call(client, user_intention=INTENTION, repo_path=str(repo))

            def attempts() -> tuple[int, ...]:
                link = link_in(first)
                origin = link.split("/answer/")[0]
                page = urllib.request.urlopen(link, timeout=30).read().decode()
                found = re.search(r'name="csrf_token" value="([^"]+)"', page)
                assert found, page
                answer = {"csrf_token": found.group(1), "auth_strategy": "OAuth"}
                return (
                    post(link, answer, "http://evil.example"),
                    post(link, {**answer, "csrf_token": "forged"}, origin),
                    post(link, answer, origin),
                    status(link),
                )

            return await anyio.to_thread.run_sync(attempts)

    assert (403, 403, 303, 410) == anyio.run(main)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
