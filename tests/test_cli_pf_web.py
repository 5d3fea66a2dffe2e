"""``preflight-fsm pf start INTENTION --web``: Preflights' own ``pf`` as a process, its rounds
answered by the person on the answer page in headless Chromium; the ADR records ``user_web``."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("preflights")

from selenium.webdriver.remote.webdriver import WebDriver

from preflights_e2e import PREFLIGHT_FSM, PROVIDER_VARIABLE, make_repo
from test_preflights_web import INTENTION, answer_in_browser

TIMEOUT = 60.0


@contextmanager
def pf_web(repo: Path, home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``preflight-fsm pf ARGS --web`` running in ``repo``, and the link it printed; killed if
    it is still running at the end of the block."""
    inherited = {k: v for k, v in os.environ.items() if not PROVIDER_VARIABLE.match(k)}
    process = subprocess.Popen(
        [PREFLIGHT_FSM, "pf", *args, "--web"],
        cwd=repo,
        env={**inherited, "HOME": str(home), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        seen = ""
        while (found := re.search(r"http://localhost:\d+/answer/[A-Za-z0-9_-]+", seen)) is None:
            seen += lines.get(timeout=TIMEOUT)
        yield process, found.group(0)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


def test_pf_web_prints_a_link_and_the_adr_records_the_page(
    browser: WebDriver, tmp_path: Path
) -> None:
    repo, home = make_repo(tmp_path)
    with pf_web(repo, home, "start", INTENTION) as (process, link):
        shown = answer_in_browser(browser, link)
        assert 0 == process.wait(timeout=TIMEOUT)
    adr = next((repo / "docs" / "adr").glob("*.md")).read_text(encoding="utf-8")
    assert "Decision documented" in shown
    assert ("Passkeys", "user_web") == (
        "Passkeys" if "Passkeys" in adr else adr,
        "user_web" if "user_web" in adr else adr,
    )


def test_pf_web_without_the_page_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from preflight_fsm.integrations.preflights.command_line import run_pf

    monkeypatch.setitem(sys.modules, "preflight_fsm.integrations.preflights.page_loop", None)
    assert (1, 0) == (run_pf(["start", "Add a thing", "--web"]), run_pf(["--version"]))
    assert "--web needs the answer page" in capsys.readouterr().err
