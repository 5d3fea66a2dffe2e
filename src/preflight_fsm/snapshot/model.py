"""The snapshot schema (C9): its fields and their limits, as pydantic models; the JSON form
without the model (field order, signed fields, canonical JSON) is ``json_form.py``'s."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.principal import MAX_PRINCIPAL
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.sizes import (
    MAX_ANSWERS,
    MAX_IDS,
    MAX_SNAPSHOT_BYTES,
    MAX_STEPS,
    MAX_TEXT,
    MAX_VALUE,
)
from preflight_fsm.snapshot.json_form import (
    FIELDS,
    SCHEMA_VERSION,
    SIGNED_FIELDS,
    canonical,
    signed_json,
    trace_object,
)
from preflight_fsm.states import StateName

__all__ = [
    "FIELDS",
    "MAX_ANSWERS",
    "MAX_IDS",
    "MAX_SNAPSHOT_BYTES",
    "MAX_STEPS",
    "MAX_TEXT",
    "MAX_VALUE",
    "SCHEMA_VERSION",
    "SIGNED_FIELDS",
    "SessionSnapshot",
    "TraceStep",
    "canonical",
    "canonical_content",
    "signed_json",
    "trace_object",
]

_Text = Annotated[StrictStr, Field(max_length=MAX_TEXT)]
_Value = Annotated[StrictStr, Field(max_length=MAX_VALUE)]
_Principal = Annotated[StrictStr, Field(max_length=MAX_PRINCIPAL)]  # replay checks it is clean


class _Frozen(BaseModel):
    # Lax only where JSON has no type of its own (arrays stand for tuples); every leaf is strict,
    # so "1" is no turn number and true no integer, from JSON text and from json.loads alike.
    model_config = ConfigDict(frozen=True, extra="forbid")


class TraceStep(_Frozen):
    """One transition taken: in which step (0 = the session's start), from where, to where, why."""

    turn: StrictInt = Field(ge=0, le=100)
    trigger: Literal["start", "answer"]
    source: StateName
    dest: StateName
    guards: tuple[_Text, ...] = Field(default=(), max_length=8)


class SessionSnapshot(_Frozen):
    """A session as data: Preflights' four fields first, then its inputs, then what they derive.

    Only ``intention``, ``asked_questions``, ``answered_questions`` and ``missing_info`` are
    required: such a minimal snapshot restores to the position it names (C9).
    """

    intention: _Value
    asked_questions: tuple[_Text, ...] = Field(max_length=MAX_IDS)
    answered_questions: tuple[_Text, ...] = Field(max_length=MAX_IDS)
    missing_info: tuple[_Text, ...] = Field(max_length=MAX_IDS)
    schema_version: StrictInt = SCHEMA_VERSION
    flow: _Text | None = None
    flow_fingerprint: _Text | None = None
    # The principal that started the session (schema version 4; null: unauthenticated).
    owner: _Principal | None = None
    # The inputs: the answers each accepted step took, as normalised (null: given blank).
    steps: tuple[dict[_Text, _Value | None], ...] = Field(default=(), max_length=MAX_STEPS)
    # Who supplied each step's answers, one per step (schema version 3; older steps: unknown).
    answered_by: tuple[AnsweredBy, ...] = Field(default=(), max_length=MAX_STEPS)
    # The authenticated caller of each step, and each user_passkey step's passkey proof, one
    # per step (schema version 4; older steps: null).
    principals: tuple[_Principal | None, ...] = Field(default=(), max_length=MAX_STEPS)
    proofs: tuple[PasskeyProof | None, ...] = Field(default=(), max_length=MAX_STEPS)
    # What the inputs derive; restoring checks each against the replay.
    state: StateName | None = None
    category: _Text | None = None
    other_for: _Text | None = None
    answers: dict[_Text, _Value] = Field(default_factory=dict, max_length=MAX_ANSWERS)
    turn: StrictInt | None = Field(default=None, ge=0, le=100)
    trace: tuple[TraceStep, ...] = Field(default=(), max_length=MAX_IDS)
    digest: _Text | None = None
    seal: _Text | None = None

    @property
    def is_minimal(self) -> bool:
        """True for Preflights' four-field form (no ``state``)."""
        return self.state is None

    def content_digest(self) -> str:
        """SHA-256 of the snapshot's inputs as canonical JSON (what they derive is checked by
        replaying them, D48)."""
        return hashlib.sha256(canonical_content(self)).hexdigest()


def canonical_content(snapshot: SessionSnapshot) -> bytes:
    """The inputs of ``snapshot`` as canonical JSON: what its digest and seal cover."""
    return canonical({name: getattr(snapshot, name) for name in SIGNED_FIELDS})
