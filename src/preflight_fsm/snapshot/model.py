"""The snapshot schema (C9): its fields, its limits, and the canonical JSON its digest covers."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, Literal

import pydantic_core
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

SCHEMA_VERSION: Final = 4
"""The snapshot format this version writes; older ones are migrated (``versions.py``)."""


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


FIELDS: Final = tuple(SessionSnapshot.model_fields)
"""Every field of :class:`SessionSnapshot`, in its order: the order of the keys of a snapshot's
JSON text, which ``write.snapshot_json`` writes without the model (read from the model, so the
two cannot part; ``tests/test_snapshot_json.py`` holds the texts equal)."""


SIGNED_FIELDS: Final = (
    "answered_by",
    "flow_fingerprint",
    "intention",
    "owner",
    "principals",
    "proofs",
    "schema_version",
    "steps",
)
"""What the digest and the seal cover: the session's inputs (C9), keys in sorted order. Every
other field is what they derive, and restoring refuses any of it that differs from the replay
(D48): signing the inputs signs the whole snapshot."""


def canonical_content(snapshot: SessionSnapshot) -> bytes:
    """The inputs of ``snapshot`` as canonical JSON: what its digest and seal cover."""
    return canonical({name: getattr(snapshot, name) for name in SIGNED_FIELDS})


def canonical(content: Mapping[str, Any]) -> bytes:
    """:func:`signed_json` of the signed fields of ``content``."""
    return signed_json(
        content["answered_by"],
        content["flow_fingerprint"],
        content["intention"],
        content["owner"],
        content["principals"],
        content["proofs"],
        content["schema_version"],
        content["steps"],
    )


def signed_json(
    answered_by: Sequence[str],
    flow_fingerprint: str | None,
    intention: str,
    owner: str | None,
    principals: Sequence[str | None],
    proofs: Sequence[Any],
    schema_version: int,
    steps: Sequence[Mapping[str, Any]],
) -> bytes:
    """``json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` in UTF-8
    for the signed fields (``SIGNED_FIELDS``, the parameters in their order), written by
    pydantic-core: the same bytes (``tests/test_snapshot.py`` pins it) at a fraction of the cost
    (docs/performance.md). Only each step's answers need their keys sorted here (one answer is
    in order as it stands), and a proof given as a dict (a :class:`PasskeyProof` dumps its
    fields in sorted order); a new signed field holding an object must be sorted too. The fast
    restore passes the parsed values as they are (no mapping built for :func:`canonical` to
    read, D302)."""
    return pydantic_core.to_json(
        {
            "answered_by": answered_by,
            "flow_fingerprint": flow_fingerprint,
            "intention": intention,
            "owner": owner,
            "principals": principals,
            "proofs": proofs if proofs.count(None) == len(proofs) else _sorted_proofs(proofs),
            "schema_version": schema_version,
            "steps": [step if len(step) < 2 else dict(sorted(step.items())) for step in steps],
        }
    )


def _sorted_proofs(proofs: Sequence[Any]) -> Sequence[Any]:
    """Each proof given as a dict with its keys sorted (unsigned steps, all None, the common
    case, skip this call)."""
    return [dict(sorted(p.items())) if type(p) is dict else p for p in proofs]


def trace_object(
    turn: int, trigger: str, source: str, dest: str, guards: tuple[str, ...]
) -> dict[str, Any]:
    """One trace step as the JSON object a snapshot holds."""
    return {
        "turn": turn,
        "trigger": trigger,
        "source": source,
        "dest": dest,
        "guards": list(guards),
    }
