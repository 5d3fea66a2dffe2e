"""A decision's attestation: an in-toto Statement (v1) whose predicate holds the session's inputs.

The predicate (``predicateType`` :data:`PREDICATE_TYPE`, version 1) is everything needed to
rebuild the decision by replaying it through the engine, and to check who answered::

    {"session_id": "...",                        # the id each passkey challenge binds
     "flow": {"name": "default", "fingerprint": "f89c69ac6331d44d"},
     "intention": "...", "owner": null,         # as the engine recorded them
     "prefilled": ["auth_strategy"],            # ids a front end filled in from the intention
     "steps": [{"answers": {...}, "answered_by": "user_passkey", "principal": "ada",
                "proof": {"person": ..., "credential_id": ..., "authenticator_data": ...,
                          "client_data_json": ..., "signature": ...}}, ...]}

The statement's one subject is the decision (named ``preflight-fsm:decision:<session id>``),
its ``sha256`` digest over the decision file's text above the record (``decision_record.py``).
Serialised as compact JSON with sorted keys on one line, ``<``, ``>`` and ``&`` written as
``\\u003c``, ``\\u003e`` and ``\\u0026`` so that no typed text can end the HTML comment that
holds it. Parsing it is untrusted input: strict, bounded,
unknown keys refused.
"""

from __future__ import annotations

import json
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.snapshot.model import MAX_STEPS, MAX_TEXT, MAX_VALUE

__all__ = [
    "MAX_ATTESTATION_CHARS",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "AttestationError",
    "Statement",
    "attest",
    "parse_statement",
    "replayed",
    "serialise",
    "subject_name",
]

STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE: Final = "urn:preflight-fsm:predicate:decision:v1"
"""The predicate's type and version; a later version gets another URN and keeps reading this."""

MAX_ATTESTATION_CHARS: Final = 512 * 1024
"""A longer attestation is refused unread (32 signed steps take well under a tenth of it)."""

_Text = Annotated[StrictStr, Field(max_length=MAX_TEXT)]
_Value = Annotated[StrictStr, Field(max_length=MAX_VALUE)]
_Hex = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FlowRef(_Strict):
    """The flow the session ran on (C10): its name and fingerprint."""

    name: _Text
    fingerprint: _Text


class AttestedStep(_Strict):
    """One step: its answers as recorded and who supplied them."""

    answers: dict[_Text, _Value | None] = Field(max_length=64)
    answered_by: AnsweredBy
    principal: _Text | None = None
    proof: PasskeyProof | None = None


class Predicate(_Strict):
    """The session's inputs (C9), and the ids a front end pre-filled from the intention."""

    session_id: _Text
    flow: FlowRef
    intention: _Value
    owner: _Text | None = None
    prefilled: tuple[_Text, ...] = Field(default=(), max_length=64)
    steps: tuple[AttestedStep, ...] = Field(max_length=MAX_STEPS)


class DigestSet(_Strict):
    """An in-toto digest set; this statement uses sha256 only."""

    sha256: _Hex


class Subject(_Strict):
    """The attested decision: its name (:func:`subject_name`), and the digest of the decision
    file's text above the record."""

    name: Annotated[StrictStr, Field(max_length=1024)]
    digest: DigestSet


class Statement(_Strict):
    """An in-toto Statement v1 with one subject and this package's decision predicate."""

    type: Literal["https://in-toto.io/Statement/v1"] = Field(alias="_type")
    subject: tuple[Subject]
    predicateType: Literal["urn:preflight-fsm:predicate:decision:v1"]  # noqa: N815 -- in-toto's
    predicate: Predicate

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class AttestationError(ValueError):
    """The attestation cannot be read or replayed; the message says what is wrong."""


def subject_name(session_id: str) -> str:
    """The statement's subject name: the decision of ``session_id``, derived so that nothing in
    a statement is free text (``verify`` requires it)."""
    return f"preflight-fsm:decision:{session_id}"


def attest(
    machine: ClarificationMachine,
    *,
    session_id: str,
    body_digest: str,
    prefilled: tuple[str, ...] = (),
) -> Statement:
    """The statement of ``machine``'s session (stored as ``session_id``) for a decision file
    whose text above the record has the SHA-256 ``body_digest``."""
    steps = tuple(
        AttestedStep(answers=dict(given), answered_by=source, principal=principal, proof=proof)
        for given, source, principal, proof in zip(
            machine.steps, machine.answered_by, machine.principals, machine.proofs, strict=True
        )
    )
    return Statement(
        type=STATEMENT_TYPE,
        subject=(Subject(name=subject_name(session_id), digest=DigestSet(sha256=body_digest)),),
        predicateType=PREDICATE_TYPE,
        predicate=Predicate(
            session_id=session_id,
            flow=FlowRef(name=machine.flow.name, fingerprint=machine.flow.fingerprint),
            intention=machine.intention,
            owner=machine.owner,
            prefilled=tuple(sorted(set(prefilled))),
            steps=steps,
        ),
    )


def serialise(statement: Statement) -> str:
    """The statement as the one line a decision record holds (this module's docstring)."""
    text = json.dumps(
        statement.model_dump(mode="json", by_alias=True),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def parse_statement(text: str) -> Statement:
    """The statement ``text`` holds; AttestationError naming what is wrong."""
    if len(text) > MAX_ATTESTATION_CHARS:
        raise AttestationError(f"it is over {MAX_ATTESTATION_CHARS:,} characters")
    try:
        return Statement.model_validate_json(text, strict=False)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "statement"
        raise AttestationError(f"{where}: {error['msg']}") from None


def replayed(statement: Statement, flows: FlowRegistry) -> ClarificationMachine:
    """The session the statement's inputs produce, by replay through the engine (C9); an
    AttestationError when its flow is not registered or the engine refuses an input."""
    predicate = statement.predicate
    flow = flows.get(predicate.flow.fingerprint)
    if flow is None:
        raise AttestationError(
            f"its flow {predicate.flow.name!r} ({predicate.flow.fingerprint}) is not registered "
            "here; name the flow file it ran on with --flow"
        )
    if flow.name != predicate.flow.name:
        raise AttestationError(
            f"its flow is named {predicate.flow.name!r}, but {predicate.flow.fingerprint} is "
            f"{flow.name!r}"
        )
    try:
        machine = ClarificationMachine(predicate.intention, flow, owner=predicate.owner)
        for i, step in enumerate(predicate.steps, start=1):
            machine.step(step.answers, step.answered_by, principal=step.principal, proof=step.proof)
            if machine.steps[-1] != step.answers:
                raise AttestationError(f"step {i}'s answers are not in the form a step records")
    except PreflightFsmError as exc:
        raise AttestationError(f"the engine refuses its inputs: {exc}") from None
    return machine
