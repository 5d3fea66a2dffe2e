"""The answer page (web/page.py, web/app.py) over a real loopback listener, as plain HTTP."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from preflight_fsm.web.app import LinkRedaction
from preflight_fsm.web.links import LinkBook
from web_pages import Served, fetch, served_page


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


CLOCK = Clock()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with served_page(LinkBook(900, clock=CLOCK)) as served:
        yield served


def answer(served: Served, link: str, **form: str) -> object:
    page = fetch(link)
    return fetch(link, {"csrf_token": page.csrf, "action": "answer", **form}, origin=served.origin)


def test_the_page_shows_the_intention_and_the_question_with_its_options(served: Served) -> None:
    _, link = served.start("Add a <b>thing</b>")
    text = fetch(link).text
    assert "Add a &lt;b&gt;thing&lt;/b&gt;" in text
    assert "<legend>What type of change is this?</legend>" in text
    assert 'value="Other (specify)"' in text
    assert 'name="change_category__other"' in text


def test_every_choice_is_a_labelled_control(served: Served) -> None:
    _, link = served.start("Add a thing")
    text = fetch(link).text
    assert '<label for="change_category-0"><input type="radio" id="change_category-0"' in text


def test_an_answer_on_the_page_is_recorded_as_user_web(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    answer(served, link, change_category="Database")
    assert ("user_web",) == served.machine(session_id).snapshot().answered_by


def test_an_answered_turn_leads_to_the_next_turn_on_a_new_link(served: Served) -> None:
    _, link = served.start("Add a thing")
    reply = answer(served, link, change_category="Database")
    assert (200, True) == (reply.status, reply.url != link)  # type: ignore[attr-defined]
    assert "Which database type?" in reply.text  # type: ignore[attr-defined]


def test_the_last_answer_shows_the_decision(served: Served) -> None:
    _, link = served.start("Add a database table")
    reply = answer(served, link, db_type="MySQL")
    assert "<dt>Type</dt><dd>MySQL</dd>" in reply.text  # type: ignore[attr-defined]


def test_other_with_its_text_decides_that_text(served: Served) -> None:
    session_id, link = served.start("Add a database table")
    answer(served, link, db_type="Other (specify)", db_type__other="CockroachDB")
    assert ("Type", "CockroachDB") in served.machine(session_id).turn.patch.fields  # type: ignore[union-attr]


def test_a_refused_answer_is_shown_and_nothing_is_recorded(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    page = fetch(link)
    reply = fetch(link, {"csrf_token": page.csrf, "action": "answer"}, origin=served.origin)
    assert (422, ()) == (reply.status, served.machine(session_id).snapshot().answered_by)
    assert "Not recorded:" in reply.text


def test_declining_ends_the_session_without_a_decision(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    page = fetch(link)
    fetch(link, {"csrf_token": page.csrf, "action": "decline"}, origin=served.origin)
    assert "NoPatch" == served.machine(session_id).turn.state


def test_a_used_link_says_so_and_changes_nothing(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    page = fetch(link)
    form = {"csrf_token": page.csrf, "action": "answer", "change_category": "Database"}
    fetch(link, form, origin=served.origin)
    again = fetch(link, form | {"change_category": "Frontend"}, origin=served.origin)
    assert 410 == again.status
    assert "already used" in again.text
    assert ("user_web",) == served.machine(session_id).snapshot().answered_by


def test_an_expired_link_says_so_and_changes_nothing(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    page = fetch(link)
    CLOCK.now += 900
    try:
        form = {"csrf_token": page.csrf, "action": "answer", "change_category": "Database"}
        reply = fetch(link, form, origin=served.origin)
    finally:
        CLOCK.now -= 900
    assert (410, ()) == (reply.status, served.machine(session_id).snapshot().answered_by)
    assert "expired" in reply.text


def test_a_tampered_link_says_it_is_not_valid(served: Served) -> None:
    _, link = served.start("Add a thing")
    tampered = link[:-1] + ("A" if link[-1] != "A" else "B")
    reply = fetch(tampered)
    assert (404, True) == (reply.status, "not valid" in reply.text)


def test_a_form_from_another_origin_is_refused_and_changes_nothing(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    page = fetch(link)
    form = {"csrf_token": page.csrf, "action": "answer", "change_category": "Database"}
    reply = fetch(link, form, origin="http://evil.example")
    assert (403, ()) == (reply.status, served.machine(session_id).snapshot().answered_by)


def test_a_form_without_the_pages_token_is_refused(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    form = {"csrf_token": "guess", "action": "answer", "change_category": "Database"}
    reply = fetch(link, form, origin=served.origin)
    assert (403, ()) == (reply.status, served.machine(session_id).snapshot().answered_by)


def test_a_form_larger_than_the_bound_is_refused(served: Served) -> None:
    _, link = served.start("Add a thing")
    reply = fetch(
        link,
        body=b"a=" + b"x" * 70_000,
        origin=served.origin,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert 413 == reply.status


def test_every_page_is_sent_with_a_strict_content_security_policy(served: Served) -> None:
    _, link = served.start("Add a thing")
    headers = {k.lower(): v for k, v in fetch(link).headers.items()}
    assert headers["content-security-policy"].startswith("default-src 'none'")
    assert "same-origin" == headers["referrer-policy"]


def test_the_pages_stylesheet_is_served_by_the_server_itself(served: Served) -> None:
    reply = fetch(served.origin + "/answer-assets/page.css")
    assert (200, True) == (reply.status, "font" in reply.text)


@pytest.mark.parametrize("prefix", ["/answer/", "/enroll/"])
def test_a_link_in_an_access_log_line_loses_its_token(prefix: str) -> None:
    """An answer page's link and an enrollment's alike."""
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        "",
        0,
        '%s - "%s %s"',
        ("1.2.3.4", "GET", prefix + "Zz9_-"),
        None,
    )
    LinkRedaction().filter(record)
    assert f'1.2.3.4 - "GET {prefix}[link]"' == record.getMessage()


def test_waiting_for_the_person_returns_once_the_page_stepped_the_session(served: Served) -> None:
    session_id, link = served.start("Add a thing")
    answer(served, link, change_category="Database")
    assert served.page.wait(session_id, 1, timeout=5)


def test_waiting_for_a_turn_nobody_answered_times_out(served: Served) -> None:
    session_id, _ = served.start("Add a thing")
    assert not served.page.wait(session_id, 1, timeout=0.05)
