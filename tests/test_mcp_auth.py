"""Sessions that belong to someone (mcp/auth.py): the ownership rule, and a property over the
tool layer, where several principals make thousands of random calls and none reads or answers
another's session (the real HTTP path is tests/test_mcp_tokens.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from preflight_fsm import PreflightFsmError
from preflight_fsm.mcp.auth import Caller, current_caller
from preflight_fsm.mcp.request_state import RoundSealer
from preflight_fsm.mcp.tools import ClarificationTools
from preflight_fsm.store import MemoryStore, SessionNotFound, Sessions

TEAMS = {"alice": "pay", "bob": "pay"}
PRINCIPALS = ("alice", "bob", "carol", "dave")


@pytest.mark.parametrize(
    ("caller", "owner", "allowed"),
    [
        (Caller("alice", "pay"), "alice", True),
        (Caller("bob", "pay"), "alice", True),
        (Caller("carol"), "alice", False),
        (Caller("carol"), None, False),
        (Caller(), "alice", True),
    ],
    ids=["owner", "teammate", "stranger", "unowned to an authenticated caller", "no auth"],
)
def test_a_session_is_its_owners_and_their_teams(
    caller: Caller, owner: str | None, allowed: bool
) -> None:
    assert allowed == caller.may_use(owner, TEAMS)


@contextmanager
def calling_as(principal: str) -> Iterator[None]:
    """The SDK's auth context, as its middleware sets it for an authenticated request."""
    user = AuthenticatedUser(
        AccessToken(token="t", client_id=principal, subject=principal, scopes=[])
    )
    token = auth_context_var.set(user)
    try:
        yield
    finally:
        auth_context_var.reset(token)


def test_the_caller_is_the_tokens_subject_with_its_team() -> None:
    with calling_as("bob"):
        assert Caller("bob", "pay") == current_caller(TEAMS)


CALLS = st.lists(
    st.tuples(
        st.sampled_from(PRINCIPALS),
        st.sampled_from(("start", "read", "answer")),
        st.integers(min_value=0, max_value=50),
        st.sampled_from(("OAuth", "Magic Link", "tbd")),
    ),
    min_size=1,
    max_size=40,
)


@given(calls=CALLS)
def test_no_principal_reads_or_answers_a_session_outside_its_team(
    calls: list[tuple[str, str, int, str]],
) -> None:
    tools = ClarificationTools(Sessions(MemoryStore()), RoundSealer(), "any", TEAMS)
    owners: dict[str, str] = {}
    for principal, action, pick, answer in calls:
        ids = list(owners)
        with calling_as(principal):
            if action == "start" or not ids:
                started = tools._start("Add OAuth login", None)
                owners[started.session_id] = principal
                continue
            session_id = ids[pick % len(ids)]
            allowed = Caller(principal, TEAMS.get(principal)).may_use(owners[session_id], TEAMS)
            try:
                if action == "read":
                    view = tools._view(session_id)
                    assert owners[session_id] == view.owner
                else:
                    tools._step(session_id, {"auth_strategy": answer})
            except SessionNotFound:
                assert not allowed
                continue
            except PreflightFsmError:  # a finished session, a refused answer: but it was theirs
                pass
            assert allowed
    for session_id, owner in owners.items():
        machine, _ = tools.sessions.load(session_id)
        teams = {
            owner,
            *(p for p in PRINCIPALS if TEAMS.get(p) and TEAMS.get(p) == TEAMS.get(owner)),
        }
        assert set() == set(machine.principals) - teams - {None}
