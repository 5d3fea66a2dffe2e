"""Headless Chromium (Debian's ``chromium-headless-shell`` and ``chromium-driver``) driven by
Selenium 4, for the answer page's tests: one browser per test session (``browser`` fixture in
conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
"""Chromium's headless shell (the "old" headless mode, a build of its own made for automation):
the same engine, page, DevTools and WebAuthn virtual authenticator as ``chromium --headless=new``
without the whole browser around them, at a sixth of the CPU to start and settle (D325)."""
_WAIT = 30.0
"""Seconds a page may take to change as a test waits for it (generous: two loaded cores)."""
_POLL = 0.02
"""Seconds between two looks at a page that has not changed yet: the wait ends within this of
the change (Selenium's default, 0.5 s, cost about 0.5 s a page as a wait's first look misses)."""


class ChromiumMissing(RuntimeError):
    """The headless shell the answer page's tests drive is not installed."""


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    if not Path(CHROMIUM).exists():
        raise ChromiumMissing(
            f"{CHROMIUM} is missing: apt-get install chromium-headless-shell chromium-driver"
            " (.ci/run installs them)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # Other switches (no back-forward cache, one renderer process, no background networking, a
    # smaller window, --single-process, ...) were measured and saved no CPU (D306): a page costs
    # what it costs, so the tests render one only where the browser is the point. The shell is
    # headless without a switch.
    for argument in (
        "--no-sandbox",  # the tests may run as root, where Chromium's sandbox cannot start
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=900,1000",
    ):
        options.add_argument(argument)
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(_WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def submit(driver: WebDriver, selector: str = "button[value=answer]") -> None:
    """Click the form's ``selector`` button and wait until the browser shows the next page."""
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, selector).click()
    _wait_until_replaced(driver, old)


def press(driver: WebDriver, element: WebElement, key: str) -> None:
    """Send ``key`` to ``element`` and wait until the browser shows the next page."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.send_keys(key)
    _wait_until_replaced(driver, old)


def _wait_until_replaced(driver: WebDriver, old: WebElement) -> None:
    """Wait until ``old`` (the previous page's root) has left the document.

    Selenium's ``staleness_of`` knows one way a node goes stale; while Chromium swaps documents
    its DevTools can also answer "Node with given id does not belong to the document" (a plain
    ``WebDriverException``), which means the same and was seen failing a CI run under load.
    """

    def replaced(_: WebDriver) -> bool:
        try:
            old.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
        return False

    WebDriverWait(driver, _WAIT, poll_frequency=_POLL).until(replaced)


@contextmanager
def virtual_authenticator(driver: webdriver.Chrome, *, user_verified: bool = True) -> Iterator[str]:
    """A platform authenticator in ``driver`` (Chromium's DevTools WebAuthn domain) that
    verifies its user without a prompt, making real credentials and signatures; removed after.
    With ``user_verified`` false its user fails (or refuses) verification: every ceremony that
    requires it ends in the browser's NotAllowedError, as when a person cancels the prompt."""
    from selenium.webdriver.common.virtual_authenticator import (
        Protocol,
        Transport,
        VirtualAuthenticatorOptions,
    )

    driver.add_virtual_authenticator(
        VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2,
            transport=Transport.INTERNAL,
            has_resident_key=True,
            has_user_verification=True,
            is_user_verified=user_verified,
        )
    )
    try:
        yield driver.virtual_authenticator_id or ""
    finally:
        if driver.virtual_authenticator_id:  # a test may have removed it itself
            driver.remove_virtual_authenticator()


_OUTCOME_SCRIPT = """
var done = arguments[arguments.length - 1], box = document.getElementById("passkey");
function told() { return Boolean(box.dataset.outcome); }
if (told()) { done(true); return; }
var observer = new MutationObserver(function () {
  if (told()) { observer.disconnect(); done(true); }
});
observer.observe(box, { attributes: true, attributeFilter: ["data-outcome"] });
"""
"""Resolves once the passkey box carries ``data-outcome`` (the page's script sets it last, when
the server has answered): a MutationObserver in the page, not a poll on an interval."""


def passkey_outcome(driver: WebDriver) -> str:
    """Click the page's passkey button and wait for the server's word: the status text."""
    driver.find_element(By.ID, "passkey-button").click()
    driver.execute_async_script(_OUTCOME_SCRIPT)  # the script timeout: chromium()'s 30 s
    return driver.find_element(By.ID, "passkey-status").text
