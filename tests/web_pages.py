"""Helpers for the answer page's tests: a page over an in-memory store served on loopback,
and plain HTTP requests to it (urllib), including a person who answers every turn by posting the
page's form as a browser posts it (``answer_by_form``: where the page's transport, not the
browser, is what a test is about)."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser

from preflight_fsm import ClarificationMachine
from preflight_fsm.store import Sessions
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import AnswerPage, PageListener
from preflight_fsm.web.links import LinkBook


@dataclass
class Fetched:
    status: int
    url: str
    headers: dict[str, str]
    text: str

    @property
    def csrf(self) -> str:
        found = re.search(r'name="csrf_token" value="([^"]+)"', self.text)
        assert found, self.text
        return found.group(1)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def fetch(
    url: str,
    form: dict[str, str] | None = None,
    *,
    origin: str | None = None,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    follow: bool = True,
) -> Fetched:
    data = body if body is not None else (urllib.parse.urlencode(form).encode() if form else None)
    sent = dict(headers or {})
    if origin is not None:
        sent["Origin"] = origin
    request = urllib.request.Request(url, data=data, headers=sent)
    opener = urllib.request.build_opener(*(() if follow else (_NoRedirect(),)))
    try:
        with opener.open(request, timeout=30) as reply:
            return Fetched(reply.status, reply.url, dict(reply.headers), reply.read().decode())
    except urllib.error.HTTPError as error:
        return Fetched(error.code, url, dict(error.headers), error.read().decode())


class _Form(HTMLParser):
    """The answer page's form as a browser sees it: where it posts, its hidden fields, the
    choices of each radio group and its text inputs; whether the page shows an outcome."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.action = ""
        self.hidden: dict[str, str] = {}
        self.choices: dict[str, list[str]] = {}
        self.texts: list[str] = []
        self.outcome = False
        self.passkey: dict[str, str] = {}
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if found.get("role") == "status":
            self.outcome = True
        if found.get("id") == "passkey":  # the box the page's script reads (web/script.py)
            self.passkey = found
        if tag == "form":
            self.action = found.get("action", "")
        elif tag == "input":
            kind, name = found.get("type", "text"), found.get("name", "")
            if kind == "hidden":
                self.hidden[name] = found.get("value", "")
            elif kind == "radio":
                self.choices.setdefault(name, []).append(found.get("value", ""))
            elif kind == "text":
                self.texts.append(name)


def answer_by_form(link: str, answers: dict[str, str], *, max_pages: int = 6) -> str:
    """The person answers every turn from ``link`` on with ``answers`` (by question id: a
    choice's value or a text), posting the form as a browser does (every field it holds, the
    Answer button, the page's origin) and following the redirect; the outcome page's HTML."""
    page = fetch(link)
    for _ in range(max_pages):
        if shows_outcome(page):
            return page.text
        page = post_answers(page, answers)
    raise AssertionError("the page never showed the outcome: " + page.text)


def shows_outcome(page: Fetched) -> bool:
    """Whether ``page`` shows the session's outcome (its ``role=status``; a confirm page's
    passkey status too: look for ``passkey_box`` first)."""
    return _Form(page.text).outcome


def post_answers(page: Fetched, answers: dict[str, str]) -> Fetched:
    """The answer form on ``page`` posted with ``answers`` as the browser posts it: the page the
    redirect leads to (the next turn, the outcome, or the passkey's confirm page)."""
    form = _Form(page.text)
    chosen = {
        name: answers[name] for name, values in form.choices.items() if answers.get(name) in values
    }
    typed = {name: answers.get(name, "") for name in form.texts}
    assert chosen or any(typed.values()), f"the page asks nothing in {answers}: {page.text}"
    origin = page.url.split("/answer/")[0]
    fields = {**form.hidden, **chosen, **typed, "action": "answer"}
    reply = fetch(origin + form.action, fields, origin=origin)
    assert 200 == reply.status, reply.text
    return reply


def passkey_box(page: Fetched) -> dict[str, str]:
    """The attributes of the passkey box on a confirm page (none elsewhere): the ceremony's
    options, the form token and where the script posts the credential (``data-options``,
    ``data-csrf``, ``data-action``)."""
    return _Form(page.text).passkey


@dataclass
class Served:
    sessions: Sessions
    page: AnswerPage

    @property
    def origin(self) -> str:
        assert self.page.base_url
        return self.page.base_url

    def start(self, intention: str) -> tuple[str, str]:
        """A new session and the link to its first turn."""
        record = self.sessions.create(ClarificationMachine(intention))
        link = self.page.link(record.id)
        assert link
        return record.id, link

    def machine(self, session_id: str) -> ClarificationMachine:
        return self.sessions.load(session_id)[0]


@contextmanager
def served_page(links: LinkBook | None = None) -> Iterator[Served]:
    sessions = Sessions(MemoryStore())
    page = AnswerPage(sessions, links)
    with PageListener(page):
        yield Served(sessions, page)
