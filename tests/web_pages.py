"""Helpers for the answer page's tests: a page over an in-memory store served on loopback,
and plain HTTP requests to it (urllib)."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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
