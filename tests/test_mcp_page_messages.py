"""What an agent's call says while a turn waits for the person on the answer page
(``mcp/page_rounds.py``): what is recorded, how, and what waits."""

from __future__ import annotations

from preflight_fsm.answered_by import answered_through
from preflight_fsm.mcp.page_rounds import waiting_message


def test_turn_1_waiting_says_nothing_is_recorded_yet() -> None:
    assert (
        "turn 1 waits for the person on the answer page (--answers-from web); nothing is "
        "recorded yet"
    ) == waiting_message("web", 1, None)


def test_after_a_signed_turn_1_the_message_names_who_signed_it() -> None:
    assert (
        "turn 1 recorded (signed by Ada with their passkey); turn 2 waits for the person on the "
        "answer page, each turn confirmed with their passkey (--answers-from person)"
    ) == waiting_message("person", 2, "signed by Ada with their passkey")


def test_later_turns_say_how_many_are_recorded_and_how_the_last_was() -> None:
    before = answered_through("user_web")
    assert (
        "turns 1-2 recorded (turn 2 answered through this server's answer page); turn 3 waits "
        "for the person on the answer page (--answers-from web)"
    ) == waiting_message("web", 3, before)
