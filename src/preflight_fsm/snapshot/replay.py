"""Replay (C9): a session is what its inputs produce; refusals name the step."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from preflight_fsm.engine import Engine
from preflight_fsm.errors import InvalidAnswers, InvalidIntention, InvalidSnapshot, SessionFinished
from preflight_fsm.session import Session

__all__ = ["replay"]


def replay(engine: Engine, intention: str, steps: Iterable[Mapping[str, Any]]) -> Session:
    """A new session on ``engine`` stepped through ``steps``; InvalidSnapshot names what fails."""
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
            s = engine.step(s, given)
        except (InvalidAnswers, SessionFinished) as exc:
            raise InvalidSnapshot(f"steps.{i}", f"is refused on replay: {exc}") from None
    return s
