"""Writing a snapshot (C9): a session's inputs, what they derive, its digest and seal."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from preflight_fsm.guards import choice_key
from preflight_fsm.session import Session
from preflight_fsm.snapshot.json_form import FIELDS, SCHEMA_VERSION, canonical, trace_object
from preflight_fsm.snapshot.seal import SealKeys
from preflight_fsm.states import NEED_OTHER
from preflight_fsm.turn_data import missing_info_of

if TYPE_CHECKING:
    from preflight_fsm.snapshot.model import SessionSnapshot, TraceStep

__all__ = ["derived_fields", "snapshot_json", "snapshot_of", "trace_of"]


def snapshot_of(s: Session, seal: SealKeys | None = None) -> SessionSnapshot:
    """The full snapshot of a session, with its digest (and its seal when keys are given)."""
    from preflight_fsm.snapshot.model import SessionSnapshot  # the model, for the API only

    return SessionSnapshot.model_validate(_content(s, seal))


def snapshot_json(s: Session, seal: SealKeys | None = None) -> str:
    """The JSON text of :func:`snapshot_of`'s snapshot, as its ``model_dump_json()`` writes it
    (the same text: ``tests/test_snapshot_json.py`` holds them equal), written from the session's
    plain data without building the model: what a store keeps (issue 32, D299)."""
    content = _content(s, seal)
    proofs = content["proofs"]
    if proofs.count(None) != len(proofs):  # a signed step: each proof as the model dumps it
        content["proofs"] = [None if p is None else p.model_dump() for p in proofs]
    ordered = {name: content[name] for name in FIELDS}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def _content(s: Session, seal: SealKeys | None) -> dict[str, Any]:
    """Every field of the session's snapshot, with its digest and seal, as the model takes it."""
    content = derived_fields(s)
    content.update(
        intention=s.intention,
        schema_version=SCHEMA_VERSION,
        flow_fingerprint=s.engine.flow_data.fingerprint,
        steps=s.steps,
        answered_by=s.answered_by,
        owner=s.owner,
        principals=s.principals,
        proofs=s.proofs,
    )
    signed = canonical(content)
    content["digest"] = hashlib.sha256(signed).hexdigest()
    content["seal"] = seal.seal(signed) if seal is not None else None
    return content


def trace_of(s: Session) -> tuple[TraceStep, ...]:
    """Every transition the session took, in order."""
    from preflight_fsm.snapshot.model import TraceStep  # the model, for the API only

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
        "flow": engine.flow_data.name,
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
