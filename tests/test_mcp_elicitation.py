"""Elicitation end to end, in both protocol eras, with the SDK's own client: in memory (the
server ``mcp`` serves over stdio, built in the test's process), over stdio for the first test
(the process boundary) and over HTTP for the last ones.

``mode="auto"`` negotiates 2026-07-28 (input-required rounds, request state through the client);
``mode="legacy"`` the handshake era (``elicitation/create`` requests). The same forms, the same
outcomes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcp_servers import call, connect_http, connect_memory, connect_stdio, shared_http_server
from preflight_fsm import ClarificationMachine
from preflight_fsm.mcp.elicitation import answers_from, form_model, input_request

MODES = ["auto", "legacy"]
# Form content to accept, or the action of a form not accepted.
Reply = dict[str, Any] | Literal["decline", "cancel"]


class Forms:
    """An elicitation callback that answers the forms it is shown with scripted replies."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.shown: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.shown.append(params)
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return types.ElicitResult(action=reply)
        return types.ElicitResult(action="accept", content=reply)


def run(
    tmp_path: Path,
    mode: str,
    forms: Forms,
    body: Callable[[Client], Awaitable[Any]],
    errlog: TextIO | None = None,
) -> Any:
    """``body`` with a client that shows ``forms``: in memory, or over stdio with ``errlog``."""

    async def main() -> Any:
        with anyio.fail_after(60):
            store = str(tmp_path / "sessions.sqlite3")
            if errlog is not None:
                connected = connect_stdio(store, tmp_path, errlog, mode=mode, elicitation=forms)
            else:
                connected = connect_memory(store, mode=mode, elicitation=forms)
            async with connected as c:
                return await body(c)

    return anyio.run(main)


def start(intention: str) -> Callable[[Client], Awaitable[dict[str, Any]]]:
    async def body(client: Client) -> dict[str, Any]:
        return await call(client, "require_clarification", user_intention=intention)

    return body


@pytest.mark.parametrize("mode", MODES)
def test_accepted_forms_finish_the_session_in_one_call(
    tmp_path: Path, errlog: TextIO, mode: str
) -> None:
    forms = Forms([{"change_category": "Database"}, {"db_type": "PostgreSQL"}])
    done = run(tmp_path, mode, forms, start("Speed up the checkout page"), errlog)
    assert ("completed", [{"name": "Type", "value": "PostgreSQL"}]) == (
        done["status"],
        done["patch"]["fields"],
    )
    assert 2 == len(forms.shown)


@pytest.mark.parametrize("mode", MODES)
def test_a_choice_form_offers_the_options_as_an_enum_and_a_text_field_for_other(
    tmp_path: Path, mode: str
) -> None:
    forms = Forms([{"auth_strategy": "OAuth"}])
    run(tmp_path, mode, forms, start("Add OAuth login"))
    schema = forms.shown[0].requested_schema
    assert ["OAuth", "Email/Password", "Magic Link", "Other (specify)"] == schema["properties"][
        "auth_strategy"
    ]["enum"]
    assert "string" == schema["properties"]["auth_strategy__other"]["type"]
    assert ["auth_strategy"] == schema["required"]


@pytest.mark.parametrize("mode", MODES)
def test_other_with_its_text_in_the_same_form_completes(tmp_path: Path, mode: str) -> None:
    forms = Forms([{"auth_strategy": "Other (specify)", "auth_strategy__other": "Passkeys"}])
    done = run(tmp_path, mode, forms, start("Add OAuth login"))
    assert [{"name": "Strategy", "value": "Passkeys"}] == done["patch"]["fields"]


@pytest.mark.parametrize("mode", MODES)
def test_other_without_its_text_asks_a_text_field_next(tmp_path: Path, mode: str) -> None:
    forms = Forms([{"auth_strategy": "Other (specify)"}, {"auth_strategy__other": "Passkeys"}])
    done = run(tmp_path, mode, forms, start("Add OAuth login"))
    second = forms.shown[1].requested_schema
    assert (["auth_strategy__other"], ["auth_strategy__other"]) == (
        list(second["properties"]),
        second["required"],
    )
    assert ("completed", "Passkeys") == (done["status"], done["patch"]["fields"][0]["value"])


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("mode", MODES)
def test_a_declined_form_returns_the_questions_and_the_session_as_it_stood(
    tmp_path: Path, mode: str, action: Literal["decline", "cancel"]
) -> None:
    forms = Forms([{"change_category": "Database"}, action])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        result = await call(
            client, "require_clarification", user_intention="Speed up the checkout page"
        )
        return result, await call(client, "get_session", session_id=result["session_id"])

    result, view = run(tmp_path, mode, forms, body)
    assert ("needs_clarification", 2, ["db_type", "db_type__other"]) == (
        result["status"],
        result["turn"],
        [q["id"] for q in result["questions"]],
    )
    assert (2, {"change_category": "Database"}) == (view["version"], view["answers"])


@pytest.mark.parametrize("mode", MODES)
def test_a_form_the_engine_refuses_is_asked_again_with_the_problem(
    tmp_path: Path, mode: str
) -> None:
    forms = Forms(
        [
            {"auth_strategy": "Other (specify)", "auth_strategy__other": "bell\x07"},
            {"auth_strategy": "Magic Link"},
        ]
    )
    done = run(tmp_path, mode, forms, start("Add OAuth login"))
    assert forms.shown[1].message.startswith("Not accepted:")
    assert "Magic Link" == done["patch"]["fields"][0]["value"]


@pytest.mark.parametrize("mode", MODES)
def test_forms_refused_three_times_end_in_invalid_answers_with_nothing_written(
    tmp_path: Path, mode: str
) -> None:
    bad = {"auth_strategy": "Other (specify)", "auth_strategy__other": "bell\x07"}
    forms = Forms([bad, bad, bad])

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        result = await call(client, "require_clarification", user_intention="Add OAuth login")
        return result, await call(client, "get_session", session_id=result["session_id"])

    result, view = run(tmp_path, mode, forms, body)
    assert "invalid_answers" == result["error"]["code"]
    assert 1 == view["version"]


def test_answers_sent_with_the_call_are_applied_before_the_forms(tmp_path: Path) -> None:
    forms = Forms([{"db_type": "MySQL"}])

    async def body(client: Client) -> dict[str, Any]:
        return await call(
            client,
            "require_clarification",
            user_intention="Speed up the checkout page",
            answers={"change_category": "Database"},
        )

    done = run(tmp_path, "auto", forms, body)
    assert ("Database", 1) == (done["patch"]["category"], len(forms.shown))


# -- 2026-07-28 request state: tamper-evident ----------------------------------------------------


async def _first_round(client: Client) -> types.InputRequiredResult:
    first = await client.session.call_tool(
        "require_clarification",
        {"user_intention": "Speed up the checkout page"},
        allow_input_required=True,
    )
    assert isinstance(first, types.InputRequiredResult)
    return first


def _accept(content: dict[str, Any]) -> dict[str, types.InputResponse]:
    return {"answer": types.ElicitResult(action="accept", content=content)}


def _flip(state: str) -> str:
    """``state`` with one character changed, as a client tampering with it would."""
    i = len(state) // 2
    return state[:i] + ("A" if state[i] != "A" else "B") + state[i + 1 :]


def test_a_tampered_request_state_gets_an_error_result_and_changes_nothing(tmp_path: Path) -> None:
    async def body(client: Client) -> tuple[Any, list[int]]:
        first = await _first_round(client)
        assert first.request_state is not None
        tampered = await client.session.call_tool(
            "require_clarification",
            {"user_intention": "Speed up the checkout page"},
            input_responses=_accept({"change_category": "Database"}),
            request_state=_flip(first.request_state),
            allow_input_required=True,
        )
        from preflight_fsm.store import open_store

        with open_store(str(tmp_path / "sessions.sqlite3")) as store:
            versions = [store.get(sid).version for sid in store.list()]
        return tampered, versions

    tampered, versions = run(tmp_path, "auto", Forms([]), body)
    assert [1] == versions
    assert isinstance(tampered, types.CallToolResult)
    assert tampered.is_error
    assert "invalid_request_state" == tampered.structured_content["error"]["code"]
    assert json.loads(tampered.content[0].text) == tampered.structured_content  # type: ignore[union-attr]


def test_a_round_answered_after_the_session_moved_on_is_a_conflict(tmp_path: Path) -> None:
    """The state binds the stored version: an answer through chat in between wins."""

    async def body(client: Client) -> Any:
        first = await _first_round(client)
        # Which session the round belongs to is not visible in the round; list it from the store.
        from preflight_fsm.store import open_store

        with open_store(str(tmp_path / "sessions.sqlite3")) as store:
            (session_id,) = store.list()
        # Another caller answers the turn (this client would elicit the next one: not taken).
        await client.session.call_tool(
            "require_clarification",
            {"session_id": session_id, "answers": {"change_category": "Infra"}},
            allow_input_required=True,
        )
        return await client.session.call_tool(
            "require_clarification",
            {"user_intention": "Speed up the checkout page"},
            input_responses=_accept({"change_category": "Database"}),
            request_state=first.request_state,
            allow_input_required=True,
        )

    late = run(tmp_path, "auto", Forms([]), body)
    assert isinstance(late, types.CallToolResult)
    assert "session_conflict" == late.structured_content["error"]["code"]


# -- the forms themselves ------------------------------------------------------------------------


def test_an_input_request_carries_the_same_form_as_elicitation_create() -> None:
    questions = ClarificationMachine("Add OAuth login").turn.questions
    request = input_request("Which?", questions)
    assert "elicitation/create" == request.method
    assert isinstance(request.params, types.ElicitRequestFormParams)
    assert (
        form_model(questions).model_json_schema()["required"]
        == request.params.requested_schema["required"]
    )


def test_form_content_outside_the_options_is_reported_for_the_re_ask() -> None:
    questions = ClarificationMachine("Add OAuth login").turn.questions
    answers, problem = answers_from(questions, {"auth_strategy": "Kerberos"})
    assert {} == answers
    assert problem is not None
    assert problem.startswith("auth_strategy:")


@pytest.mark.parametrize("mode", MODES)
def test_forms_work_over_http_too(mode: str) -> None:
    forms = Forms([{"change_category": "Infra"}, {"infra_hosting": "Serverless"}])

    async def main(url: str) -> dict[str, Any]:
        with anyio.fail_after(60):
            async with connect_http(url, mode=mode, elicitation=forms) as client:
                return await call(client, "require_clarification", user_intention="Deploy the API")

    with shared_http_server() as server:
        done = anyio.run(main, server.url)
    assert [{"name": "Hosting", "value": "Serverless"}] == done["patch"]["fields"]


@pytest.mark.parametrize(
    ("keys_b", "expected"),
    [((b"k" * 32,), "completed"), ((), "invalid_request_state")],
    ids=["shared keys", "own keys"],
)
def test_a_round_continues_on_another_server_only_with_shared_keys(
    keys_b: tuple[bytes, ...], expected: str
) -> None:
    """Two servers on one store: the round minted by one is opened by the other if keys match."""
    from preflight_fsm.mcp import build_server
    from preflight_fsm.store import MemoryStore, Sessions

    sessions = Sessions(MemoryStore())
    one = build_server(sessions, request_state_keys=[b"k" * 32])
    two = build_server(sessions, request_state_keys=keys_b)

    async def main() -> Any:
        async with Client(one, elicitation_callback=Forms([])) as a:
            first = await a.session.call_tool(
                "require_clarification",
                {"user_intention": "Add OAuth login"},
                allow_input_required=True,
            )
        assert isinstance(first, types.InputRequiredResult)
        async with Client(two, elicitation_callback=Forms([])) as b:
            return await b.session.call_tool(
                "require_clarification",
                {"user_intention": "Add OAuth login"},
                input_responses=_accept({"auth_strategy": "OAuth"}),
                request_state=first.request_state,
                allow_input_required=True,
            )

    result = anyio.run(main)
    assert isinstance(result, types.CallToolResult)
    data = result.structured_content or {}
    assert expected == (data["status"] if data["status"] != "error" else data["error"]["code"])
