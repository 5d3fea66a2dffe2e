"""The --answers-from policy's setting (preflight_fsm.mcp.policy)."""

from __future__ import annotations

import pytest

from preflight_fsm.mcp.policy import ANSWERS_FROM_ENV, answers_from_setting


@pytest.mark.parametrize(
    ("option", "env", "expected"),
    [
        (None, {}, "any"),
        (None, {ANSWERS_FROM_ENV: "user"}, "user"),
        ("any", {ANSWERS_FROM_ENV: "user"}, "any"),
        (" USER ", {}, "user"),
        (None, {ANSWERS_FROM_ENV: "person"}, "person"),
        ("web", {}, "web"),
        ("everyone", {}, None),
        (None, {ANSWERS_FROM_ENV: "agents"}, None),
    ],
    ids=[
        "default",
        "environment",
        "option-wins",
        "case-and-space",
        "person-env",
        "web",
        "bad-option",
        "bad-env",
    ],
)
def test_the_option_then_the_environment_then_any_names_the_policy(
    option: str | None, env: dict[str, str], expected: str | None
) -> None:
    """--answers-from wins over PREFLIGHT_FSM_ANSWERS_FROM; neither means any; else None."""
    assert expected == answers_from_setting(option, env)
