"""``--answers-from person`` on the answer page: each turn confirmed with the person's passkey,
in a real browser (headless Chromium, its virtual authenticator), after a real enrollment; and on
the server, what a network client can post (a software passkey): forged or moved assertions,
unsigned answers, the bounds on answers waiting for a passkey."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from typer.testing import CliRunner, Result

from mcp_servers import PREFLIGHT_FSM, free_port
from person_passkey import Enrolled, sign_by_form, software_passkey
from preflight_fsm import ClarificationMachine
from preflight_fsm.cli import app
from preflight_fsm.passkeys import step_challenge
from preflight_fsm.people import People
from preflight_fsm.store import Sessions
from preflight_fsm.store.base import StoredSession
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import PageListener
from preflight_fsm.web.enroll import Enrollment
from preflight_fsm.web.html import CSRF_FIELD
from preflight_fsm.web.links import LinkBook
from preflight_fsm.web.signing import SIGN_SUFFIX, SignedAnswerPage
from software_authenticator import SoftwareAuthenticator
from web_browser import passkey_outcome, submit, virtual_authenticator
from web_pages import Fetched, Served, fetch


@dataclass
class Signing:
    page: SignedAnswerPage
    sessions: Sessions


@pytest.fixture
def signing(ada: Enrolled) -> Iterator[Signing]:
    """The page that asks a passkey, served on the origin Ada enrolled on (her passkey in the
    browser's authenticator for the test: conftest's ``ada``)."""
    with _signing_page(ada.people, ada.port) as served:
        yield served


@pytest.fixture
def signing_alone(browser: webdriver.Chrome, tmp_path: Path) -> Iterator[Signing]:
    """Ada enrolled for this test alone (in the browser's authenticator, kept for the test),
    then the page that asks her passkey served on the origin she enrolled on: for a test that
    leaves her passkey's signature count where no later test may use it."""
    port = free_port()
    enrollment = Enrollment("Ada Lovelace", tmp_path / "people.toml")
    with virtual_authenticator(browser):
        with PageListener(enrollment, port=port):
            browser.get(enrollment.link)
            assert "Enrolled" in passkey_outcome(browser)
        with _signing_page(tmp_path / "people.toml", port) as served:
            yield served


@contextmanager
def _signing_page(people: Path, port: int) -> Iterator[Signing]:
    sessions = Sessions(MemoryStore())
    page = SignedAnswerPage(sessions, People.load(people))
    with PageListener(page, port=port):
        yield Signing(page, sessions)


def _answer_and_sign(browser: webdriver.Chrome, label: str) -> str:
    browser.find_element(By.CSS_SELECTOR, f"label[for={label}]").click()
    submit(browser)
    return passkey_outcome(browser)


def _a_new_session(signing: Signing) -> tuple[StoredSession, str]:
    """A session started on the signing page's store, and the page's link to its turn."""
    record = signing.sessions.create(ClarificationMachine("Add a thing"))
    link = signing.page.link(record.id)
    assert link is not None
    return record, link


def test_a_whole_session_is_answered_and_signed_with_the_persons_passkey(
    browser: webdriver.Chrome, signing: Signing
) -> None:
    record, link = _a_new_session(signing)
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
    record, link = _a_new_session(signing)
    browser.remove_virtual_authenticator()
    with virtual_authenticator(browser):  # another person's authenticator: not enrolled
        browser.get(link)
        said = _answer_and_sign(browser, "change_category-2")
    assert "Nothing was recorded" in said
    assert () == signing.sessions.load(record.id)[0].snapshot().answered_by


def test_a_copy_of_the_passkey_with_an_old_counter_is_refused_in_the_browser(
    browser: webdriver.Chrome, signing_alone: Signing
) -> None:
    """Chromium's authenticator counts its signatures: a copy of Ada's credential taken before
    she signed turn 1 (a clone) signs turn 2 with a count already seen; the page says so and
    records nothing, and the counts file beside the people file holds the last count (D277)."""
    [copy] = browser.get_credentials()
    record, link = _a_new_session(signing_alone)
    browser.get(link)
    assert "Signed and recorded." == _answer_and_sign(browser, "change_category-2")
    submit(browser, "#passkey-next")
    browser.remove_virtual_authenticator()
    with virtual_authenticator(browser):
        browser.add_credential(copy)
        said = _answer_and_sign(browser, "db_type-0")
    assert "Nothing was recorded: the passkey was refused (counter_not_increased)" in said
    assert ("user_passkey",) == signing_alone.sessions.load(record.id)[0].snapshot().answered_by
    counts = signing_alone.page.counts
    assert counts.path is not None
    assert counts.last(copy.id.rstrip("=")) > copy.sign_count  # Selenium pads base64url
    assert counts.path.name == "people.sign-counts.json"


def test_chat_web_passkey_signs_a_stored_session_that_verify_requires_person_passes(
    tmp_path: Path,
) -> None:
    """The command's process serves the signing page (Ada signs with her software passkey,
    posting what the page's script posts: the page in a browser is this file's tests above)."""
    ada, people = software_passkey(tmp_path)
    store = str(tmp_path / "sessions.db")
    started = _run("start", "Add a thing", "--store", store)
    assert 0 == started.exit_code, started.output
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
        said, _ = sign_by_form(link.group(1), {**DATABASE, "db_type": "PostgreSQL"}, ada)
        assert ["Signed and recorded.", True] == [said[0], "finished" in said[-1]], said
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
    assert 0 == verified.exit_code, verified.output


def _run(*arguments: str) -> Result:
    """The command line in the test's process: `chat` is the process this test starts."""
    return CliRunner().invoke(app, list(arguments))


# -- on the server, without a browser: what a network client can send -------------------------


@dataclass
class Software(Served):
    """A signed page on loopback whose people file lists Ada's software passkey."""

    ada: SoftwareAuthenticator = field(default_factory=SoftwareAuthenticator)

    def answer(self, link: str, answers: dict[str, str]) -> Fetched:
        """The form posted as the person's browser posts it: the confirm page."""
        form = {CSRF_FIELD: fetch(link).csrf, "action": "answer", **answers}
        return fetch(link, form, origin=self.origin)

    def sign(self, link: str, confirm: Fetched, credential: object) -> tuple[int, str]:
        """``credential`` posted as the page's script posts it: the status and the message."""
        found = re.search(r'data-csrf="([^"]+)"', confirm.text)
        assert found, confirm.text
        body = json.dumps({CSRF_FIELD: found.group(1), "credential": credential}).encode()
        reply = fetch(
            link + SIGN_SUFFIX,
            body=body,
            origin=self.origin,
            headers={"Content-Type": "application/json"},
        )
        return reply.status, json.loads(reply.text)["message"]

    def challenge(self, session_id: str, answers: dict[str, str]) -> bytes:
        machine, _ = self.sessions.load(session_id)
        return step_challenge(machine, session_id, answers)

    def steps(self, session_id: str) -> int:
        return len(self.sessions.load(session_id)[0].steps)


@pytest.fixture(scope="module")
def software() -> Iterator[Software]:
    port = free_port()
    ada = SoftwareAuthenticator(seed=1, origin=f"http://localhost:{port}")
    sessions = Sessions(MemoryStore())
    page = SignedAnswerPage(sessions, People((ada.person("Ada Lovelace"),)))
    with PageListener(page, port=port):
        yield Software(sessions, page, ada)


DATABASE = {"change_category": "Database"}


def test_a_correctly_signed_assertion_takes_the_step_as_user_passkey(software: Software) -> None:
    session_id, link = software.start("Add a thing")
    confirm = software.answer(link, DATABASE)
    signed = software.ada.sign(software.challenge(session_id, DATABASE))
    assert (200, "Signed and recorded.") == software.sign(link, confirm, signed)
    machine, _ = software.sessions.load(session_id)
    assert ("user_passkey",) == machine.snapshot().answered_by


def test_the_confirm_page_shows_the_flows_wording_not_the_answer_ids(software: Software) -> None:
    """What the passkey confirms is shown as the person read it: the question's text and the
    chosen option's label."""
    session_id, link = software.start("Add a thing")
    question = software.sessions.load(session_id)[0].turn.questions[0]
    confirm = software.answer(link, DATABASE)
    shown = re.search(r"<dl>(.*?)</dl>", confirm.text, re.S)
    assert shown, confirm.text
    assert f"<dt>{escape(question.question)}</dt><dd>Database</dd>" == shown.group(1)


def test_answers_posted_without_a_passkey_are_not_recorded(software: Software) -> None:
    """The form alone leads to the confirm page, and a sign request without an assertion is
    refused naming the passkey: an unsigned answer never becomes a step."""
    session_id, link = software.start("Add a thing")
    confirm = software.answer(link, DATABASE)
    status, message = software.sign(link, confirm, None)
    assert (200, 403) == (confirm.status, status)
    assert "your passkey" in message
    assert 0 == software.steps(session_id)


def test_a_forged_assertion_is_refused_and_records_nothing(software: Software) -> None:
    """Signed by a key that is not Ada's, under her credential id: bad_signature."""
    session_id, link = software.start("Add a thing")
    confirm = software.answer(link, DATABASE)
    forger = SoftwareAuthenticator(seed=2, origin=software.origin)
    forger.credential_id = software.ada.credential_id
    forged = forger.sign(software.challenge(session_id, DATABASE))
    status, message = software.sign(link, confirm, forged)
    assert (403, 0) == (status, software.steps(session_id))
    assert "Nothing was recorded: the passkey was refused (bad_signature)" in message


def test_a_valid_assertion_moved_from_another_session_is_refused(software: Software) -> None:
    """Ada's assertion for one session's turn, posted to another's page: wrong_challenge."""
    first_id, _ = software.start("Add a thing")
    other_id, other_link = software.start("Add a thing")
    confirm = software.answer(other_link, DATABASE)
    moved = software.ada.sign(software.challenge(first_id, DATABASE))
    status, message = software.sign(other_link, confirm, moved)
    assert (403, 0, 0) == (status, software.steps(other_id), software.steps(first_id))
    assert "(wrong_challenge)" in message


def test_a_valid_assertion_moved_from_an_earlier_turn_is_refused(software: Software) -> None:
    """Turn 1's assertion, posted again on turn 2's page: wrong_challenge, turn 2 unanswered."""
    session_id, link = software.start("Add a thing")
    first = software.ada.sign(software.challenge(session_id, DATABASE))
    assert 200 == software.sign(link, software.answer(link, DATABASE), first)[0]
    second_link = software.page.link(session_id)
    assert second_link is not None
    confirm = software.answer(second_link, {"db_type": "MySQL"})
    status, message = software.sign(second_link, confirm, first)
    assert (403, 1) == (status, software.steps(session_id))
    assert "(wrong_challenge)" in message


def test_a_cloned_authenticators_assertion_is_refused_and_records_nothing(
    software: Software,
) -> None:
    """A copy of Ada's key whose signature counter is behind the last one the page saw for her
    credential: refused with counter_not_increased, the turn unanswered, the count unchanged;
    Ada's own authenticator, counting on, signs the turn after (D277)."""
    session_id, link = software.start("Add a thing")
    first = software.ada.sign(software.challenge(session_id, DATABASE))
    assert 200 == software.sign(link, software.answer(link, DATABASE), first)[0]
    assert isinstance(software.page, SignedAnswerPage)
    seen = software.page.counts.last(software.ada.person("Ada").credential_id)
    clone = SoftwareAuthenticator(seed=1, origin=software.origin)
    clone.sign_count = seen - 1  # its next signature reports the count already seen
    second_link = software.page.link(session_id)
    assert second_link is not None
    confirm = software.answer(second_link, {"db_type": "MySQL"})
    cloned = clone.sign(software.challenge(session_id, {"db_type": "MySQL"}))
    status, message = software.sign(second_link, confirm, cloned)
    assert (403, 1) == (status, software.steps(session_id))
    assert "Nothing was recorded: the passkey was refused (counter_not_increased)" in message
    assert f"counter ({seen}) does not exceed the last one seen for it ({seen})" in message
    genuine = software.ada.sign(software.challenge(session_id, {"db_type": "MySQL"}))
    assert 200 == software.sign(second_link, confirm, genuine)[0]


def test_the_answers_waiting_for_a_passkey_are_bounded_in_number() -> None:
    """Past max_pending, the oldest checked answers are forgotten (answer the form again)."""
    page = SignedAnswerPage(Sessions(MemoryStore()), People(), max_pending=2)
    for _ in range(3):
        _answer_unsigned(page)
    assert 2 == page.pending()


def test_the_answers_waiting_for_a_passkey_are_forgotten_after_a_links_lifetime() -> None:
    now = [0.0]
    links = LinkBook(60.0, clock=lambda: now[0])
    page = SignedAnswerPage(Sessions(MemoryStore()), People(), links)
    _answer_unsigned(page)
    assert 1 == page.pending()
    now[0] = 61.0
    assert 0 == page.pending()


def _answer_unsigned(page: SignedAnswerPage) -> None:
    """A new session's first turn answered on ``page``'s form, waiting for its passkey."""
    record = page.sessions.create(ClarificationMachine("Add a thing"))
    link = page.link(record.id)
    assert link is not None
    token = link.rsplit("/", 1)[1]
    grant = page.links.find(token)
    assert not isinstance(grant, str)
    page.answer(token, {CSRF_FIELD: [grant.csrf], "change_category": ["Database"]})


def test_a_page_whose_people_file_lists_nobody_yet_refuses_every_passkey() -> None:
    """What `mcp --enroll` serves under person before anyone has enrolled: a valid assertion of
    a passkey the (empty) people file does not list records nothing."""
    port = free_port()
    sessions = Sessions(MemoryStore())
    page = SignedAnswerPage(sessions, People(()))
    with PageListener(page, port=port):
        ada = SoftwareAuthenticator(seed=1, origin=f"http://localhost:{port}")
        nobody = Software(sessions, page, ada)
        session_id, link = nobody.start("Add a thing")
        confirm = nobody.answer(link, DATABASE)
        signed = nobody.ada.sign(nobody.challenge(session_id, DATABASE))
        status, message = nobody.sign(link, confirm, signed)
    assert (403, 0) == (status, nobody.steps(session_id))
    assert "Nothing was recorded: the passkey was refused (unknown_credential)" in message
