"""Writing a snapshot (C9): a session's inputs, what they derive, its digest and seal."""

from __future__ import annotations

import hashlib
from typing import Any

from preflight_fsm.guards import choice_key
from preflight_fsm.session import Session
from preflight_fsm.snapshot.model import (
    SCHEMA_VERSION,
    SessionSnapshot,
    TraceStep,
    canonical,
    trace_object,
)
from preflight_fsm.snapshot.seal import SealKeys
from preflight_fsm.states import NEED_OTHER
from preflight_fsm.turn import missing_info_of

__all__ = ["derived_fields", "snapshot_of", "trace_of"]


def snapshot_of(s: Session, seal: SealKeys | None = None) -> SessionSnapshot:
    """The full snapshot of a session, with its digest (and its seal when keys are given)."""
    content = derived_fields(s)
    content.update(
        intention=s.intention,
        schema_version=SCHEMA_VERSION,
        flow_fingerprint=s.engine.flow.fingerprint,
        steps=s.steps,
        answered_by=s.answered_by,
        owner=s.owner,
        principals=s.principals,
        proofs=s.proofs,
    )
    signed = canonical(content)
    content["digest"] = hashlib.sha256(signed).hexdigest()
    content["seal"] = seal.seal(signed) if seal is not None else None
    return SessionSnapshot.model_validate(content)


def trace_of(s: Session) -> tuple[TraceStep, ...]:
    """Every transition the session took, in order."""
    return tuple(
        TraceStep(turn=turn, trigger=e.trigger, source=e.source, dest=e.dest, guards=e.guards)
        for turn, e in s.trace
    )


def derived_fields(s: Session) -> dict[str, Any]:
    """What a session's inputs derive, in the JSON form a snapshot holds it (lists for arrays,
    a dict per trace step). The answers are the session's own: read, never change them."""
    engine = s.engine
    position = s.position
    # NeedOther names the choice question whose "Other (specify)" text it waits for.
    other_for = choice_key(s) if position.state == NEED_OTHER else None
    return {
        "flow": engine.flow.name,
        "state": position.state,
        "category": position.category,
        "other_for": other_for,
        "turn": s.turn,
        "answers": s.answers,
        "answered_questions": list(s.answers),
        "asked_questions": list(s.asked),
        "missing_info": list(missing_info_of(s)),
        "trace": [trace_object(turn, e.trigger, e.source, e.dest, e.guards) for turn, e in s.trace],
    }
