"""Who answered, over MCP: ``answered_by`` recorded per step, and the ``--answers-from`` policy.

End to end with the SDK's own client, in memory (the server ``mcp`` serves over stdio, built in
the test's process) and over HTTP (a real server process), in both elicitation eras
(``mode="auto"``: 2026-07-28 input-required rounds; ``"legacy"``: ``elicitation/create``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from mcp_servers import call, connect_http, connect_memory, http_server, shared_http_server
from test_mcp_elicitation import Forms
from test_mcp_web import link_in
from web_browser import submit

MODES = ["auto", "legacy"]
TRANSPORTS = ["memory", "http"]
USER = ("--answers-from", "user")
INTENTION = "Speed up the checkout page"  # no keywords: the category, then the field


class Server:
    """A server on a fresh SQLite store over one transport, started with ``extra`` options."""

    def __init__(self, transport: str, tmp_path: Path, extra: tuple[str, ...]) -> None:
        self.transport, self.tmp_path, self.extra = transport, tmp_path, extra
        self.store = str(tmp_path / "sessions.sqlite3")
        self.url = ""
        self.before: set[str] = set()

    @asynccontextmanager
    async def connect(
        self, mode: str = "auto", forms: Forms | None = None
    ) -> AsyncIterator[Client]:
        """A client in ``mode``; with ``forms`` it shows forms, without it it cannot."""
        if self.transport == "http":
            async with connect_http(self.url, mode=mode, elicitation=forms) as client:
                yield client
            return
        options = dict(zip(self.extra[::2], self.extra[1::2], strict=True))
        policy = options.pop("--answers-from", "any")
        assert policy in ("any", "user"), self.extra
        assert not options, self.extra
        async with connect_memory(
            self.store,
            mode=mode,
            elicitation=forms,
            answers_from="user" if policy == "user" else "any",
        ) as client:
            yield client

    def run(
        self,
        body: Callable[[Client], Awaitable[Any]],
        mode: str = "auto",
        forms: Forms | None = None,
    ) -> Any:
        """``body`` with one connected client, bounded in time."""

        async def main() -> Any:
            with anyio.fail_after(60):
                async with self.connect(mode, forms) as client:
                    return await body(client)

        return anyio.run(main)

    def ids(self) -> set[str]:
        with sqlite3.connect(self.store) as db:
            return {row[0] for row in db.execute("SELECT id FROM sessions")}

    def versions(self) -> list[int]:
        """The stored version of every session this test started (the HTTP server, and so its
        store, is shared with other tests)."""
        with sqlite3.connect(self.store) as db:
            rows = db.execute("SELECT id, version FROM sessions").fetchall()
        return [version for sid, version in rows if sid not in self.before]


@contextmanager
def serving(transport: str, tmp_path: Path, *extra: str) -> Iterator[Server]:
    """A server in memory on a fresh store, or the shared HTTP server started with ``extra``."""
    server = Server(transport, tmp_path, extra)
    if transport == "memory":
        yield server
    else:
        with shared_http_server(*extra) as running:
            server.url, server.store = running.url, running.store
            server.before = server.ids()
            yield server


async def view(client: Client, session_id: str) -> dict[str, Any]:
    return await call(client, "get_session", session_id=session_id)


def sources(shown: dict[str, Any]) -> list[str]:
    return [step["answered_by"] for step in shown["steps"]]


# -- any (the default): both channels accepted, each recorded as what it is ---------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_from_forms_are_recorded_as_user_form(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """Every step answered in a form says user_form, in get_session's steps and trace and in
    who decided each value."""
    forms = Forms([{"change_category": "Database"}, {"db_type": "PostgreSQL"}])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        done = await call(client, "require_clarification", user_intention=INTENTION)
        return done, await view(client, done["session_id"])

    with serving(transport, tmp_path) as server:
        done, shown = server.run(body, mode, forms)
    assert [
        {"name": "Category", "answered_by": "user_form"},
        {"name": "Type", "answered_by": "user_form"},
    ] == done["decided_by"]
    assert ["user_form", "user_form"] == sources(shown)
    assert ["user_form", "user_form"] == [t.get("answered_by") for t in shown["trace"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_passed_as_tool_arguments_are_recorded_as_agent(
    tmp_path: Path, transport: str
) -> None:
    """A client without forms answers by tool arguments: each such step says agent."""

    async def body(client: Client) -> dict[str, Any]:
        first = await call(
            client,
            "require_clarification",
            user_intention=INTENTION,
            answers={"change_category": "Database"},
        )
        sid = first["session_id"]
        await call(client, "require_clarification", session_id=sid, answers={"db_type": "MySQL"})
        return await view(client, sid)

    with serving(transport, tmp_path) as server:
        shown = server.run(body)
    assert ["agent", "agent"] == sources(shown)
    assert [{"step": 1, "answered_by": "agent", "answers": {"change_category": "Database"}}] == (
        shown["steps"][:1]
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_session_mixing_arguments_and_forms_records_each_step_as_it_came(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """The agent answers the category in the call, the person the field in a form: agent, then
    user_form, and the decision says who supplied which value."""
    forms = Forms([{"db_type": "MySQL"}])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        done = await call(
            client,
            "require_clarification",
            user_intention=INTENTION,
            answers={"change_category": "Database"},
        )
        return done, await view(client, done["session_id"])

    with serving(transport, tmp_path) as server:
        done, shown = server.run(body, mode, forms)
    assert ["agent", "user_form"] == sources(shown)
    assert [
        {"name": "Category", "answered_by": "agent"},
        {"name": "Type", "answered_by": "user_form"},
    ] == done["decided_by"]


# -- user: answers only from the person, through forms -------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_user_policy_refuses_tool_arguments_then_asks_the_person(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """Under --answers-from user, answers in the call are answers_need_user and nothing is
    stored; the same call without them asks the person, whose steps say user_form."""
    forms = Forms([{"change_category": "Database"}, {"db_type": "PostgreSQL"}])

    async def body(client: Client) -> tuple[dict[str, Any], list[int], dict[str, Any]]:
        refused = await call(
            client,
            "require_clarification",
            user_intention=INTENTION,
            answers={"change_category": "Database"},
        )
        stored = server.versions()
        done = await call(client, "require_clarification", user_intention=INTENTION)
        return refused, stored, await view(client, done["session_id"])

    with serving(transport, tmp_path, *USER) as server:
        refused, stored, shown = server.run(body, mode, forms)
    assert ("answers_need_user", []) == (refused["error"]["code"], stored)
    assert "no answers" in refused["error"]["recovery_hint"]
    assert ("completed", ["user_form", "user_form"]) == (shown["status"], sources(shown))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_user_policy_refuses_arguments_to_a_stored_session_and_changes_nothing(
    tmp_path: Path, transport: str
) -> None:
    """A continuing call with answers is refused under user; the session keeps its version."""
    forms = Forms(["cancel"])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = await call(client, "require_clarification", user_intention=INTENTION)
        sid = first["session_id"]
        refused = await call(
            client,
            "require_clarification",
            session_id=sid,
            answers={"change_category": "Database"},
        )
        return refused, await view(client, sid)

    with serving(transport, tmp_path, *USER) as server:
        refused, shown = server.run(body, "legacy", forms)
    assert ("answers_need_user", shown["session_id"]) == (
        refused["error"]["code"],
        refused["session_id"],
    )
    assert (1, []) == (shown["version"], shown["steps"])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_under_the_user_policy_a_client_without_forms_gets_the_answer_pages_link(
    tmp_path: Path, transport: str, browser: WebDriver
) -> None:
    """No forms under user: answers_need_user with the answer page's link in the hint (not a
    terminal); the person answers there (steps say user_web), and the agent reads the outcome."""

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        refused = await call(client, "require_clarification", user_intention="Add OAuth login")
        link = link_in(refused["error"]["recovery_hint"])
        await anyio.to_thread.run_sync(answer_first_option, browser, link)
        sid = refused["session_id"]
        done = await call(client, "require_clarification", session_id=sid)
        return refused, done, await view(client, sid)

    with serving(transport, tmp_path, *USER) as server:
        refused, done, shown = server.run(body)
    assert "answers_need_user" == refused["error"]["code"]
    assert "chat --session" not in refused["error"]["recovery_hint"]
    assert ("completed", ["user_web"]) == (done["status"], sources(shown))


def answer_first_option(browser: WebDriver, link: str) -> None:
    """The person, on the answer page: the first option of its one question."""
    browser.get(link)
    browser.find_element(By.CSS_SELECTOR, "form label").click()
    submit(browser)


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("mode", MODES)
def test_under_the_user_policy_a_declined_form_leaves_the_session_waiting(
    tmp_path: Path, mode: str, action: Literal["decline", "cancel"]
) -> None:
    """A declined or closed form under user is answers_need_user, not questions for the agent
    to answer; nothing is recorded and the next call shows the form again."""
    forms = Forms([action, {"auth_strategy": "OAuth"}])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        declined = await call(client, "require_clarification", user_intention="Add OAuth login")
        sid = declined["session_id"]
        shown = await view(client, sid)
        return declined, shown, await call(client, "require_clarification", session_id=sid)

    with serving("memory", tmp_path, *USER) as server:
        declined, shown, done = server.run(body, mode, forms)
    assert "answers_need_user" == declined["error"]["code"]
    assert "declined" in declined["error"]["message"]
    assert (1, []) == (shown["version"], shown["steps"])
    assert "completed" == done["status"]


def test_the_environment_sets_the_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PREFLIGHT_FSM_ANSWERS_FROM=user applies when --answers-from is not given."""
    monkeypatch.setenv("PREFLIGHT_FSM_ANSWERS_FROM", "user")

    async def body(client: Client) -> dict[str, Any]:
        return await call(
            client,
            "require_clarification",
            user_intention="Add OAuth login",
            answers={"auth_strategy": "OAuth"},
        )

    server = Server("http", tmp_path, ())  # a process of its own: it reads the environment
    with http_server(server.store, tmp_path) as running:
        server.url = running.url
        refused = server.run(body)
    assert "Traceback" not in running.stderr.read_text()
    assert "answers_need_user" == refused["error"]["code"]


# -- stored sessions: answered_by is signed ------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_stored_answered_by_relabelled_is_refused_on_restore(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """The agent's step of a mixed session relabelled user_form in the store is corrupt_session:
    the digest covers answered_by, and nothing is served from it."""
    forms = Forms([{"db_type": "MySQL"}])

    async def answer(client: Client) -> str:
        done = await call(
            client,
            "require_clarification",
            user_intention=INTENTION,
            answers={"change_category": "Database"},
        )
        return str(done["session_id"])

    with serving(transport, tmp_path) as server:
        sid = server.run(answer, mode, forms)
        with sqlite3.connect(server.store) as db:
            changed = db.execute(
                "UPDATE sessions SET snapshot = replace(snapshot, "
                '\'"answered_by":["agent",\', \'"answered_by":["user_form",\') '
                "WHERE id = ?",
                (sid,),
            ).rowcount
            (stored,) = db.execute("SELECT snapshot FROM sessions WHERE id = ?", (sid,)).fetchone()
        assert 1 == changed
        assert '"answered_by":["user_form","user_form"]' in stored
        refused = server.run(lambda client: view(client, sid))
    assert ("corrupt_session", sid) == (refused["error"]["code"], refused["session_id"])


def test_the_published_output_schemas_name_answered_by_and_the_new_error_code(
    tmp_path: Path,
) -> None:
    """Both tools' output schemas carry answered_by and answers_need_user."""

    async def body(client: Client) -> dict[str, Any]:
        return {t.name: t.output_schema for t in (await client.list_tools()).tools}

    with serving("memory", tmp_path) as server:
        schemas = server.run(body)
    for name in ("require_clarification", "get_session"):
        text = json.dumps(schemas[name])
        assert "answers_need_user" in text, name
        assert "answered_by" in text, name


def test_under_the_user_policy_the_tool_tells_agents_not_to_answer(tmp_path: Path) -> None:
    """The policy is in require_clarification's description, where an agent reads it first."""

    async def body(client: Client) -> str:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["require_clarification"].description or ""

    with serving("memory", tmp_path, *USER) as server:
        described = server.run(body)
    assert "never send answers yourself" in described
