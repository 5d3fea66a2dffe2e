"""``--answers-from person`` on the answer page: each turn confirmed with the person's passkey,
in a real browser (headless Chromium, its virtual authenticator), after a real enrollment."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from mcp_servers import PREFLIGHT_FSM, free_port
from preflight_fsm import ClarificationMachine
from preflight_fsm.people import People
from preflight_fsm.store import Sessions
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import PageListener
from preflight_fsm.web.enroll import Enrollment
from preflight_fsm.web.signing import SignedAnswerPage
from web_browser import passkey_outcome, submit, virtual_authenticator


@dataclass
class Signing:
    page: SignedAnswerPage
    sessions: Sessions


@pytest.fixture
def signing(browser: webdriver.Chrome, tmp_path: Path) -> Iterator[Signing]:
    """Ada enrolled (in the browser's authenticator, kept for the test), then the page that
    asks her passkey served on the origin she enrolled on."""
    port = free_port()
    enrollment = Enrollment("Ada Lovelace", tmp_path / "people.toml")
    with virtual_authenticator(browser):
        with PageListener(enrollment, port=port):
            browser.get(enrollment.link)
            assert "Enrolled" in passkey_outcome(browser)
        sessions = Sessions(MemoryStore())
        page = SignedAnswerPage(sessions, People.load(tmp_path / "people.toml"))
        with PageListener(page, port=port):
            yield Signing(page, sessions)


def _answer_and_sign(browser: webdriver.Chrome, label: str) -> str:
    browser.find_element(By.CSS_SELECTOR, f"label[for={label}]").click()
    submit(browser)
    return passkey_outcome(browser)


def test_a_whole_session_is_answered_and_signed_with_the_persons_passkey(
    browser: webdriver.Chrome, signing: Signing
) -> None:
    record = signing.sessions.create(ClarificationMachine("Add a thing"))
    link = signing.page.link(record.id)
    assert link is not None
    browser.get(link)
    assert "Signed and recorded." == _answer_and_sign(browser, "change_category-2")
    submit(browser, "#passkey-next")
    assert "finished" in _answer_and_sign(browser, "db_type-0")
    machine, _ = signing.sessions.load(record.id)
    snapshot = machine.snapshot()
    assert ("user_passkey", "user_passkey") == snapshot.answered_by
    assert "Done" == machine.turn.state


def test_a_passkey_not_in_the_people_file_records_nothing_and_the_page_says_why(
    browser: webdriver.Chrome, signing: Signing
) -> None:
    record = signing.sessions.create(ClarificationMachine("Add a thing"))
    link = signing.page.link(record.id)
    assert link is not None
    browser.remove_virtual_authenticator()
    with virtual_authenticator(browser):  # another person's authenticator: not enrolled
        browser.get(link)
        said = _answer_and_sign(browser, "change_category-2")
    assert "Nothing was recorded" in said
    assert () == signing.sessions.load(record.id)[0].snapshot().answered_by


def test_chat_web_passkey_signs_a_stored_session_that_verify_requires_person_passes(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    people, store = tmp_path / "people.toml", str(tmp_path / "sessions.db")
    port = free_port()
    with virtual_authenticator(browser):
        enrollment = Enrollment("Ada Lovelace", people)
        with PageListener(enrollment, port=port):
            browser.get(enrollment.link)
            assert "Enrolled" in passkey_outcome(browser)
        started = _run("start", "Add a thing", "--store", store)
        session_id = started.stdout.split()[1]
        chat = subprocess.Popen(
            [
                *(PREFLIGHT_FSM, "chat", "--web", "--passkey", "--people", str(people)),
                *("--session", session_id, "--store", store),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert chat.stdout is not None
            link = re.search(r"(http://localhost:\S+)", chat.stdout.readline())
            assert link, "no link printed"
            browser.get(link.group(1))
            assert "Signed and recorded." == _answer_and_sign(browser, "change_category-2")
            submit(browser, "#passkey-next")
            assert "finished" in _answer_and_sign(browser, "db_type-0")
            assert 0 == chat.wait(60)
        finally:
            if chat.poll() is None:
                chat.kill()
            chat.wait(30)
            if chat.stdout is not None:
                chat.stdout.close()
    decision = tmp_path / "decision.md"
    decision.write_text(_run("show", session_id, "--decision", "--store", store).stdout)
    verified = _run("verify", "--require", "person", "--people", str(people), str(decision))
    assert 0 == verified.returncode, verified.stdout + verified.stderr


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT_FSM, *arguments], capture_output=True, text=True, timeout=60, check=False
    )
