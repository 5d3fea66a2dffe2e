"""Replay (C9): a session is what its inputs produce; refusals name the step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.engine import Engine
from preflight_fsm.errors import InvalidAnswers, InvalidIntention, InvalidSnapshot, SessionFinished
from preflight_fsm.session import Session

__all__ = ["replay"]


def replay(
    engine: Engine,
    intention: str,
    steps: Sequence[Mapping[str, Any]],
    answered_by: Sequence[AnsweredBy],
) -> Session:
    """A new session on ``engine`` stepped through ``steps``, each supplied by its
    ``answered_by``; InvalidSnapshot names what fails."""
    if len(answered_by) != len(steps):
        raise InvalidSnapshot(
            "answered_by",
            f"holds {len(answered_by)} entries for {len(steps)} steps; it needs one per step",
        )
    try:
        s = engine.begin(intention)
    except InvalidIntention as exc:
        raise InvalidSnapshot("intention", str(exc)) from None
    if s.intention != intention:
        raise InvalidSnapshot(
            "intention", "is not in its cleaned form (stripped, NFC, LF newlines)"
        )
    for i, given in enumerate(steps):
        try:
            s = engine.step(s, given, answered_by[i])
        except (InvalidAnswers, SessionFinished) as exc:
            raise InvalidSnapshot(f"steps.{i}", f"is refused on replay: {exc}") from None
    return s
