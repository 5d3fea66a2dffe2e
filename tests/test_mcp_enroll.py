"""``mcp --transport http --enroll NAME``: the team server enrolls a passkey on its own public
origin (docs/web.md), in headless Chromium's virtual authenticator, and then signs turns with
it under ``--answers-from person``, with the SDK's own client over HTTP."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import call, connect_http, free_port, http_server
from preflight_fsm.people import People
from test_mcp_person import answer_and_sign
from test_mcp_web import link_in, type_of
from web_browser import passkey_outcome, virtual_authenticator


def test_a_server_started_under_person_with_nobody_enrolled_enrolls_on_its_origin_then_signs(
    browser: WebDriver, tmp_path: Path
) -> None:
    """With --enroll the server starts with no people file; the one link printed on standard
    error enrolls Ada on the public URL's origin (the file's entry records it), and a turn is
    then answered on the page and signed with that passkey, recorded user_passkey."""
    port = free_port()
    origin = f"http://localhost:{port}"
    people = tmp_path / "people.toml"
    options = ("--public-url", f"{origin}/mcp", "--people", str(people), "--enroll", "Ada")
    store = str(tmp_path / "s.sqlite3")
    with (
        http_server(
            store, tmp_path, "enroll", "--answers-from", "person", *options, port=port
        ) as server,
        virtual_authenticator(browser),  # type: ignore[arg-type]
    ):
        printed = server.stderr.read_text()
        [link] = re.findall(re.escape(origin) + r"/enroll/[A-Za-z0-9_-]+", printed)
        browser.get(link)
        assert "Enrolled" in passkey_outcome(browser)

        async def main() -> dict[str, Any]:
            with anyio.fail_after(120):
                async with connect_http(server.url) as client:
                    first = await call(
                        client, "require_clarification", user_intention="Add a thing"
                    )
                    page = link_in(first["error"]["recovery_hint"])
                    await anyio.to_thread.run_sync(answer_and_sign, browser, page)
                    sid = first["session_id"]
                    return await call(client, "require_clarification", session_id=sid)

        then = anyio.run(main)
        token = link.rsplit("/", 1)[1]
        assert 1 == server.stderr.read_text().count(token)
    assert ("completed", ("MySQL", "user_passkey")) == (then["status"], type_of(then))
    [ada] = People.load(people)
    assert ("Ada", "localhost", (origin,)) == (ada.name, ada.rp_id, ada.origins)
