"""The answer page in a real browser (headless Chromium): a whole session answered by keyboard
and clicks, without JavaScript from the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

import web_browser
from web_browser import ChromiumMissing, chromium, press, submit
from web_pages import Served, served_page


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with served_page() as served:
        yield served


def test_a_person_answers_a_whole_session_in_the_browser(
    browser: WebDriver, served: Served
) -> None:
    session_id, link = served.start("Add a thing")
    browser.get(link)
    browser.find_element(By.CSS_SELECTOR, "label[for=change_category-2]").click()  # Database
    submit(browser)
    browser.find_element(By.CSS_SELECTOR, "label[for=db_type-3]").click()  # Other (specify)
    browser.find_element(By.ID, "db_type__other-text").send_keys("CockroachDB")
    submit(browser)
    assert "CockroachDB" in browser.find_element(By.CSS_SELECTOR, ".decision").text
    assert ("user_web", "user_web") == served.machine(session_id).snapshot().answered_by


def test_the_form_is_answered_with_the_keyboard_alone(browser: WebDriver, served: Served) -> None:
    session_id, link = served.start("Add a database table")
    browser.get(link)
    first = browser.find_element(By.ID, "db_type-0")
    first.send_keys(Keys.SPACE)  # a radio group is chosen with the keyboard, then submitted
    press(browser, first, Keys.ENTER)
    assert "PostgreSQL" in browser.find_element(By.CSS_SELECTOR, ".decision").text
    assert "Done" == served.machine(session_id).turn.state


def test_the_engines_refusal_is_shown_in_the_browser_and_nothing_is_recorded(
    browser: WebDriver, served: Served
) -> None:
    session_id, link = served.start("Add a database table")
    browser.get(link)
    browser.find_element(By.CSS_SELECTOR, "label[for=db_type-3]").click()
    look_alike = "\u041eAuth"  # a Cyrillic O before Latin letters (C5)
    browser.find_element(By.ID, "db_type__other-text").send_keys(look_alike)
    submit(browser)
    assert "Not recorded" in browser.find_element(By.CSS_SELECTOR, ".problem").text
    assert () == served.machine(session_id).snapshot().answered_by


def test_a_machine_without_the_headless_shell_is_told_which_packages_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_browser, "CHROMIUM", "/nonexistent/chromium-headless-shell")
    missing = pytest.raises(ChromiumMissing, match="apt-get install chromium-headless-shell")
    with missing, chromium():
        pass
