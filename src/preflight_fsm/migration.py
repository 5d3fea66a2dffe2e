"""Moving a session to another flow (C10): its inputs replayed there, or where they diverge."""

from __future__ import annotations

from dataclasses import dataclass

from preflight_fsm.engine import Engine
from preflight_fsm.errors import InvalidAnswers, InvalidIntention, SessionFinished
from preflight_fsm.session import Session
from preflight_fsm.turn_data import missing_info_of

__all__ = ["Divergence", "migrate"]


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a session's inputs lead elsewhere on another flow: the first step that differs."""

    step: int  # 0: the session's start (the keyword shortcut), k: its k-th step
    field: str  # what differs: "state", "category", "missing_info", or "answers" (refused)
    before: str
    after: str

    def __str__(self) -> str:
        where = "at the start" if self.step == 0 else f"at step {self.step}"
        return f"{where}, {self.field} is {self.after} on the new flow instead of {self.before}"


def migrate(
    s: Session, target: Engine, *, force: bool = False
) -> tuple[Session | None, Divergence | None]:
    """``s``'s inputs replayed on ``target``: (the migrated session or None, the first divergence
    or None). A diverging session is migrated only with ``force``; a refused one never."""
    source = s.engine
    try:
        here, there = source.begin(s.intention, s.owner), target.begin(s.intention, s.owner)
    except InvalidIntention as exc:
        return None, Divergence(0, "intention", "accepted", f"refused ({exc})")
    first = _outcome_difference(0, here, there)
    # Each step keeps its provenance; a passkey proof was signed over the old flow's
    # fingerprint (passkeys.py), so it no longer verifies after the move (D226: a signed
    # decision is not migrated silently into a verified one).
    provenance = zip(s.steps, s.answered_by, s.principals, s.proofs, strict=True)
    for k, (given, answered_by, principal, proof) in enumerate(provenance, start=1):
        here = source.step(here, given, answered_by, principal, proof)
        try:
            there = target.step(there, given, answered_by, principal, proof)
        except (InvalidAnswers, SessionFinished) as exc:
            return None, Divergence(k, "answers", "accepted", f"refused ({exc})")
        first = first or _outcome_difference(k, here, there)
    if first is not None and not force:
        return None, first
    return there, first


def _outcome_difference(step: int, here: Session, there: Session) -> Divergence | None:
    for field, before, after in (
        ("state", here.position.state, there.position.state),
        ("category", here.position.category, there.position.category),
        ("missing_info", missing_info_of(here), missing_info_of(there)),
    ):
        if before != after:
            return Divergence(step, field, repr(before), repr(after))
    return None
