"""``preflight-fsm people enroll``: a one-time link whose page registers a passkey in a real
browser (headless Chromium, its virtual authenticator) and writes it to the people file.

The command runs as a process where its link, its exit and its output are tested; what a network
client can send to the page is tested on the page the command serves, in the test's process
(``page``)."""

from __future__ import annotations

import re
import subprocess
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver

from mcp_servers import PREFLIGHT_FSM, free_port
from preflight_fsm.people import People
from preflight_fsm.web import PageListener
from preflight_fsm.web.enroll import Enrollment
from web_browser import passkey_outcome, virtual_authenticator
from web_pages import fetch

_LINK = re.compile(r"(http://localhost:\d+/enroll/\S+)")


@dataclass
class Enrolling:
    process: subprocess.Popen[str]
    link: str
    people: Path

    def finish(self) -> tuple[int, str]:
        out, _ = self.process.communicate(timeout=60)
        return self.process.returncode, out


@pytest.fixture
def enrolling(tmp_path: Path) -> Iterator[Enrolling]:
    people = tmp_path / "people.toml"
    process = subprocess.Popen(
        [
            *(PREFLIGHT_FSM, "people", "enroll", "Ada Lovelace", "--people", str(people)),
            *("--port", str(free_port()), "--link-ttl", "120"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = _LINK.search(line)
    assert found, line
    try:
        yield Enrolling(process, found.group(1), people)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@dataclass
class Page:
    link: str
    people: Path


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Page]:
    """The enrollment page `people enroll` serves, on a free loopback port of this process."""
    people = tmp_path / "people.toml"
    enrollment = Enrollment("Ada Lovelace", people)
    with PageListener(enrollment, port=free_port()):
        yield Page(enrollment.link, people)


def test_a_person_enrolls_a_passkey_in_the_browser_and_the_people_file_lists_it(
    browser: webdriver.Chrome, enrolling: Enrolling
) -> None:
    with virtual_authenticator(browser):
        browser.get(enrolling.link)
        said = passkey_outcome(browser)
        credentials = browser.get_credentials()
    assert "Enrolled Ada Lovelace" in said
    code, out = enrolling.finish()
    assert 0 == code
    person = People.load(enrolling.people).by_name("Ada Lovelace")
    assert person is not None
    assert 1 == len(credentials)
    assert person.credential_id in out
    assert (person.rp_id, person.origins) == ("localhost", (enrolling.link.split("/enroll")[0],))
    assert f"wrote Ada Lovelace's passkey to {enrolling.people}" in out


def test_the_page_then_shows_the_entry_written_to_commit_to_the_repository(
    browser: webdriver.Chrome, page: Page
) -> None:
    """What the people file now holds for the person, as TOML, and how to bring it into the
    repository's people file (D274)."""
    from selenium.webdriver.common.by import By

    with virtual_authenticator(browser):
        browser.get(page.link)
        said = passkey_outcome(browser)
        shown = browser.find_element(By.ID, "passkey-entry").text
    [ada] = People.load(page.people)
    assert ada.as_toml().strip() == shown
    assert 'preflight-fsm people add "Ada Lovelace" --from people.toml' in said


def test_enrolling_keeps_the_people_file_s_other_entries(
    browser: webdriver.Chrome, enrolling: Enrolling
) -> None:
    other = (
        '[[person]]\nname = "Grace"\ncredential_id = "AAAA"\npublic_key = "BBBB"\n'
        'rp_id = "localhost"\norigins = ["http://localhost:8765"]\n'
    )
    enrolling.people.write_text(other)
    with virtual_authenticator(browser):
        browser.get(enrolling.link)
        passkey_outcome(browser)
    assert 0 == enrolling.finish()[0]
    assert ["Grace", "Ada Lovelace"] == [p.name for p in People.load(enrolling.people)]


def test_the_enrollment_link_is_good_once_the_command_stops_serving_it(
    browser: webdriver.Chrome, enrolling: Enrolling
) -> None:
    with virtual_authenticator(browser):
        browser.get(enrolling.link)
        passkey_outcome(browser)
    enrolling.finish()
    with pytest.raises(urllib.error.URLError):
        fetch(enrolling.link)


def test_a_tampered_enrollment_link_grants_nothing(page: Page) -> None:
    shown = fetch(page.link[:-4] + "AAAA")
    assert 410 == shown.status
    assert "This link is not valid" in shown.text


def test_a_registration_posted_from_another_origin_writes_nothing(page: Page) -> None:
    posted = fetch(
        page.link,
        origin="http://evil.example",
        headers={"Content-Type": "application/json"},
        body=b'{"csrf_token": "x", "credential": {}}',
    )
    assert 403 == posted.status
    assert not page.people.exists()


def test_the_enrollment_page_runs_only_its_own_script(page: Page) -> None:
    shown = fetch(page.link)
    assert "script-src 'self'" in shown.headers["content-security-policy"]
    assert '<script src="/answer-assets/passkey.js" defer></script>' in shown.text
    assert "<script>" not in shown.text
