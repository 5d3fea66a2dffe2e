"""Ada's passkey for the ``--answers-from person`` tests: enrolled once per test process through the
real enrollment page in headless Chromium's virtual authenticator, then put back in the browser
for each test alone (``conftest``'s ``enrolled`` and ``ada`` fixtures); or, for tests that need
no browser, a software credential (:func:`software_passkey`) that signs each turn as the page's
script would (:func:`sign_by_form`)."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from selenium.webdriver.common.virtual_authenticator import Credential
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import free_port
from preflight_fsm.people import People
from preflight_fsm.web import PageListener
from preflight_fsm.web.enroll import Enrollment
from preflight_fsm.web.html import CSRF_FIELD
from software_authenticator import SoftwareAuthenticator
from web_browser import passkey_outcome, virtual_authenticator
from web_pages import fetch, passkey_box, post_answers, shows_outcome


@dataclass
class Enrolled:
    """Ada's passkey: in ``people``, enrolled on ``port``; ``credential`` is the virtual
    authenticator's copy (its private key and signature counter), put back in the browser for
    each test and taken out again after it with its counter advanced."""

    people: Path
    port: int
    credential: Credential

    @property
    def options(self) -> tuple[str, ...]:
        return ("--answers-from", "person", "--people", str(self.people))


def enroll(browser: WebDriver, folder: Path) -> Enrolled:
    """Ada enrolls, in an authenticator removed right after: other tests may run in this
    browser, and must not find her passkey there."""
    people = folder / "people.toml"
    port = free_port()
    with virtual_authenticator(browser):  # type: ignore[arg-type]
        enrollment = Enrollment("Ada Lovelace", people)
        with PageListener(enrollment, port=port):
            browser.get(enrollment.link)
            assert "Enrolled" in passkey_outcome(browser)
        [credential] = browser.get_credentials()
    return Enrolled(people, port, credential)


@contextmanager
def passkey_in(browser: WebDriver, enrolled: Enrolled) -> Iterator[Enrolled]:
    """Ada's passkey in the browser's authenticator while the block runs; its signature
    counter carried to the next block, as her one authenticator would carry it (the page
    refuses a count it has seen already: a clone's, D277)."""
    with virtual_authenticator(browser):  # type: ignore[arg-type]
        browser.add_credential(enrolled.credential)
        try:
            yield enrolled
        finally:  # a failed test's signatures count too: the next test must not look a clone
            if browser.virtual_authenticator_id:
                for credential in browser.get_credentials():
                    if credential.id == enrolled.credential.id:
                        enrolled.credential = credential


def software_passkey(folder: Path) -> tuple[SoftwareAuthenticator, Path]:
    """Ada's software credential (no browser) enrolled on a free loopback port, where the stdio
    page listens, and a people file in ``folder`` listing it."""
    ada = SoftwareAuthenticator(origin=f"http://localhost:{free_port()}")
    path = folder / "people.toml"
    path.write_text(ada.person("Ada Lovelace").as_toml(), encoding="utf-8")
    return ada, path


def software_people(folder: Path) -> tuple[People, str]:
    """A people file in ``folder`` listing Ada's software credential (``software_passkey``);
    and the origin she enrolled on."""
    ada, path = software_passkey(folder)
    return People.load(path), ada.origin


def sign_by_form(
    link: str, answers: dict[str, str], ada: SoftwareAuthenticator, *, max_pages: int = 12
) -> tuple[list[str], str]:
    """The person without a browser, where a test is about the server's transport and not the
    ceremony in a browser: each form from ``link`` on posted with ``answers`` as the browser
    posts it, each confirm page's challenge signed with ``ada`` and posted as the page's script
    posts the credential (web/script.py), then the reply's next page; the messages the page
    showed after each signature, and the outcome page's HTML ("" if the last reply leads to
    none)."""
    said: list[str] = []
    page = fetch(link)
    for _ in range(max_pages):
        box = passkey_box(page)
        if not box and shows_outcome(page):
            return said, page.text
        if not box:
            page = post_answers(page, answers)
            continue
        told = _post_credential(box, ada.sign(_challenge(box)), ada.origin)
        said.append(told["message"])
        if not told.get("next"):
            return said, ""
        page = fetch(urljoin(ada.origin, told["next"]))
    raise AssertionError(f"the session did not finish in {max_pages} pages: {said}")


def enroll_by_form(link: str, ada: SoftwareAuthenticator) -> str:
    """The enrollment page's ceremony without a browser: ``ada`` registers over the page's
    challenge and posts what the page's script posts; the message the page showed."""
    box = passkey_box(fetch(link))
    assert "create" == box.get("data-ceremony"), box
    return str(_post_credential(box, ada.register(_challenge(box)), ada.origin)["message"])


def _challenge(box: dict[str, str]) -> bytes:
    """The challenge in a passkey box's ceremony options (base64url, unpadded)."""
    challenge: str = json.loads(box["data-options"])["challenge"]
    return base64.urlsafe_b64decode(challenge + "=" * (-len(challenge) % 4))


def _post_credential(box: dict[str, str], credential: object, origin: str) -> dict[str, Any]:
    """``credential`` posted where the box says, as the page's script posts it: the reply,
    which must be a success."""
    body = json.dumps({CSRF_FIELD: box["data-csrf"], "credential": credential}).encode()
    reply = fetch(
        origin + box["data-action"],
        body=body,
        origin=origin,
        headers={"Content-Type": "application/json"},
    )
    told: dict[str, Any] = json.loads(reply.text)
    assert 200 == reply.status, told
    return told


@contextmanager
def holding_port(origin: str) -> Iterator[None]:
    """Another program listening on ``origin``'s loopback port while the block runs (where a
    stdio server's page would listen)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as the page's own listener does: a port a page served before (its connections in
        # TIME_WAIT) can be held; a listening socket still keeps the page's bind out.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", int(origin.rsplit(":", 1)[1])))
        sock.listen()
        yield
