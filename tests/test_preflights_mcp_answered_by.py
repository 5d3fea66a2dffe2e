"""``mcp --preflights``: Preflights' questions as forms, who answered in the ADR, and the
``--answers-from`` policy, with the SDK's own client in memory (the server ``mcp --preflights``
serves over stdio, built in the test's process) and over HTTP (a process) in both eras."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("preflights")

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcp_servers import connect_memory, shared_preflights_server
from preflights_e2e import CORE_ANSWERS, make_repo

MODES = ["auto", "legacy"]
INTENTION = "Add login to the admin dashboard"  # Authentication by keyword; nothing pre-filled
USER = ("--answers-from", "user")


class FormsById:
    """An elicitation callback filling every field it is shown from ``values`` (by question id);
    ``actions`` are replies other than accept, used first ("decline", "cancel")."""

    def __init__(self, values: dict[str, str], actions: tuple[str, ...] = ()) -> None:
        self.values, self.actions = {**CORE_ANSWERS, **values}, list(actions)
        self.shown: list[list[str]] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        fields = list(params.requested_schema["properties"])
        self.shown.append(fields)
        if self.actions:
            return types.ElicitResult(action=self.actions.pop(0))
        content = {f: self.values[f] for f in fields if f in self.values}
        return types.ElicitResult(action="accept", content=content)


class Preflights:
    """`preflight-fsm mcp --preflights` on a fresh store and repository, over one transport."""

    def __init__(self, tmp_path: Path, transport: str, extra: tuple[str, ...]) -> None:
        self.tmp_path, self.transport, self.extra = tmp_path, transport, extra
        self.repo, _home = make_repo(tmp_path)
        self.store = str(tmp_path / "sessions.sqlite3")
        self.url = ""

    @asynccontextmanager
    async def client(self, mode: str, forms: FormsById | None) -> AsyncIterator[Client]:
        if self.transport == "http":
            async with Client(self.url, mode=mode, elicitation_callback=forms) as client:
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
            preflights=True,
        ) as client:
            yield client

    def run(
        self,
        body: Callable[[Client], Awaitable[Any]],
        mode: str = "auto",
        forms: FormsById | None = None,
    ) -> Any:
        async def main() -> Any:
            with anyio.fail_after(120):
                async with self.client(mode, forms) as client:
                    return await body(client)

        if self.transport == "memory":
            return anyio.run(main)
        with shared_preflights_server(self.tmp_path, *self.extra) as s:
            self.url = s.url
            return anyio.run(main)

    def who_answered(self, adr: bool = True) -> list[str]:
        """The 'Who answered' lines of the ADR (else of the task, written for every decision)."""
        (written,) = (
            (self.repo / "docs" / "adr").glob("*.md")
            if adr
            else [self.repo / "docs" / "CURRENT_TASK.md"]
        )
        section = written.read_text().split("## Who answered", 1)[1]
        return re.findall(r"^- (.+)$", section, flags=re.MULTILINE)


async def call(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("require_clarification", arguments)
    data: dict[str, Any] = result.structured_content or {}
    return data


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["memory", "http"])
def test_forms_ask_every_round_and_the_adr_says_the_person_answered(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """A client that shows forms is asked each round (the field, then Preflights' own
    follow-ups) in one call; the ADR says the person answered in a form."""
    server = Preflights(tmp_path, transport, ())
    forms = FormsById({"auth_strategy": "Magic Link"})

    async def body(client: Client) -> dict[str, Any]:
        return await call(client, user_intention=INTENTION, repo_path=str(server.repo))

    done = server.run(body, mode, forms)
    assert "completed" == done["status"], done
    assert ["Category: intention", "Strategy: user_form"] == server.who_answered()
    assert ["auth_strategy", "auth_strategy__other"] == forms.shown[0]


@pytest.mark.parametrize("transport", ["memory", "http"])
def test_answers_passed_as_arguments_are_the_agents_in_the_adr(
    tmp_path: Path, transport: str
) -> None:
    """Without forms the agent answers by arguments; the ADR says agent."""
    server = Preflights(tmp_path, transport, ())

    async def body(client: Client) -> dict[str, Any]:
        result = await call(client, user_intention=INTENTION, repo_path=str(server.repo))
        for answers in ({"auth_strategy": "OAuth"}, CORE_ANSWERS):
            result = await call(
                client, user_intention=INTENTION, session_id=result["session_id"], answers=answers
            )
        return result

    assert "completed" == server.run(body)["status"]
    assert ["Category: intention", "Strategy: agent"] == server.who_answered()


@pytest.mark.parametrize("mode", MODES)
def test_a_session_mixing_arguments_and_forms_names_each_source(tmp_path: Path, mode: str) -> None:
    """The person closes the first form; the agent answers the category by arguments; the
    field is asked in a form: the task says agent, then user_form."""
    server = Preflights(tmp_path, "memory", ())
    forms = FormsById({"db_type": "MySQL"}, actions=("cancel",))

    async def body(client: Client) -> dict[str, Any]:
        first = await call(
            client, user_intention="Improve the checkout", repo_path=str(server.repo)
        )
        assert "needs_clarification" == first["status"]
        return await call(
            client,
            user_intention="Improve the checkout",
            session_id=first["session_id"],
            answers={"change_category": "Database"},
        )

    assert "completed" == server.run(body, mode, forms)["status"]
    assert ["Category: agent", "Type: user_form"] == server.who_answered(adr=False)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["memory", "http"])
def test_the_user_policy_refuses_arguments_then_asks_the_person(
    tmp_path: Path, transport: str, mode: str
) -> None:
    """Under --answers-from user, answers in the call are ANSWERS_NEED_USER and change nothing;
    the call without them asks the person in forms."""
    server = Preflights(tmp_path, transport, USER)
    forms = FormsById({"auth_strategy": "OAuth"}, actions=("decline",))

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        declined = await call(client, user_intention=INTENTION, repo_path=str(server.repo))
        sid = declined["session_id"]
        refused = await call(
            client, user_intention=INTENTION, session_id=sid, answers={"auth_strategy": "OAuth"}
        )
        done = await call(client, user_intention=INTENTION, session_id=sid)
        return declined, refused, done

    declined, refused, done = server.run(body, mode, forms)
    assert ("ANSWERS_NEED_USER", "ANSWERS_NEED_USER") == (
        declined["error"]["code"],
        refused["error"]["code"],
    )
    assert "completed" == done["status"], done
    assert ["Category: intention", "Strategy: user_form"] == server.who_answered()


def test_under_the_user_policy_a_client_without_forms_gets_a_clear_refusal(tmp_path: Path) -> None:
    """No forms under user: ANSWERS_NEED_USER naming the session, never questions to answer."""
    server = Preflights(tmp_path, "memory", USER)

    async def body(client: Client) -> dict[str, Any]:
        return await call(client, user_intention=INTENTION, repo_path=str(server.repo))

    refused = server.run(body)
    assert "ANSWERS_NEED_USER" == refused["error"]["code"]
    assert refused["session_id"] in refused["error"]["recovery_hint"]
    assert "questions" not in refused
