"""Replay (C9): a session is what its inputs produce; refusals name the step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.engine import Engine
from preflight_fsm.errors import InvalidAnswers, InvalidIntention, InvalidSnapshot, SessionFinished
from preflight_fsm.principal import principal_problem
from preflight_fsm.session import Session

if TYPE_CHECKING:
    from preflight_fsm.proof import PasskeyProof

__all__ = ["replay"]


def replay(
    engine: Engine,
    intention: str,
    steps: Sequence[Mapping[str, Any]],
    answered_by: Sequence[AnsweredBy],
    principals: Sequence[str | None] | None = None,
    proofs: Sequence[PasskeyProof | None] | None = None,
    owner: str | None = None,
) -> Session:
    """A new session on ``engine``, started by ``owner``, stepped through ``steps``, each
    supplied by its ``answered_by``, ``principals`` and ``proofs`` (None: none for any step);
    InvalidSnapshot names what fails."""
    _check_count("answered_by", answered_by, len(steps))
    # Unauthenticated and unsigned (most sessions): nothing more to check, nothing to pass on.
    provenance = None
    if principals is not None or proofs is not None or owner is not None:
        provenance = _provenance(len(steps), principals, proofs, owner)
    try:
        s = engine.begin(intention, owner)
    except InvalidIntention as exc:
        raise InvalidSnapshot("intention", str(exc)) from None
    if s.intention != intention:
        raise InvalidSnapshot(
            "intention", "is not in its cleaned form (stripped, NFC, LF newlines)"
        )
    for i, given in enumerate(steps):
        try:
            if provenance is None:
                s = engine.step(s, given, answered_by[i])
            else:
                s = engine.step(s, given, answered_by[i], *provenance[i])
        except (InvalidAnswers, SessionFinished) as exc:
            raise InvalidSnapshot(f"steps.{i}", f"is refused on replay: {exc}") from None
    return s


def _provenance(
    count: int,
    principals: Sequence[str | None] | None,
    proofs: Sequence[PasskeyProof | None] | None,
    owner: str | None,
) -> list[tuple[str | None, PasskeyProof | None]]:
    """Each of ``count`` steps' principal and proof (``principals``, ``proofs``: one per step,
    None: none for any step), every principal and the owner clean text; else InvalidSnapshot
    naming the field."""
    unsigned = [None] * count
    principals = unsigned if principals is None else principals
    proofs = unsigned if proofs is None else proofs
    _check_count("principals", principals, count)
    _check_count("proofs", proofs, count)
    if owner is not None or principals.count(None) != count:
        _check_principals(owner, principals)
    return list(zip(principals, proofs, strict=True))


def _check_count(name: str, held: Sequence[object], count: int) -> None:
    if len(held) != count:
        raise InvalidSnapshot(
            name, f"holds {len(held)} entries for {count} steps; it needs one per step"
        )


def _check_principals(owner: str | None, principals: Sequence[str | None]) -> None:
    """InvalidSnapshot naming the owner or the first principal that is not clean text."""
    for name, value in (
        ("owner", owner),
        *((f"principals.{i}", p) for i, p in enumerate(principals)),
    ):
        problem = None if value is None else principal_problem(value)
        if problem is not None:
            raise InvalidSnapshot(name, problem)
