"""Who supplied a step's answers (C9): recorded inputs of every step, inside the digest and
the seal: ``answered_by`` (the channel), ``principal`` (the authenticated caller) and ``proof``
(a passkey assertion, ``proof.py``).

The engine cannot tell a person from a program; each value records the channel the answers came
through, and what it proves is in ``docs/contract.md`` (the trust model): ``user_form`` that the
person answered a form this server showed through the client, ``user_web`` that they were sent
through this server's answer page, ``user_passkey`` that the page's answers were signed with a
person's passkey (the proof says whose, and anyone can check it), ``agent`` nothing about the
person, ``cli`` that they were typed at this project's command line, ``api`` a library call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

from preflight_fsm.errors import InvalidAnswers
from preflight_fsm.flow_data import OTHER_SUFFIX
from preflight_fsm.principal import check_principal
from preflight_fsm.states import Decided

if TYPE_CHECKING:
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.session import Session

__all__ = [
    "ANSWERED_BY",
    "MEANINGS",
    "SIGNED",
    "SOURCES",
    "SOURCES_DESCRIBED",
    "AnsweredBy",
    "Provenance",
    "Source",
    "answer_sources",
    "answer_steps",
    "check_answered_by",
    "check_provenance",
    "decided_by",
    "deciding_steps",
]

AnsweredBy = Literal["user_form", "user_web", "user_passkey", "agent", "cli", "api", "unknown"]
"""``user_form`` (an elicitation form), ``user_web`` (the answer page), ``user_passkey`` (the
answer page, signed with the person's passkey: the step carries the proof), ``agent`` (tool
arguments), ``cli`` (typed at the command line), ``api`` (a library call), ``unknown`` (a step
of a snapshot written before it was recorded)."""

ANSWERED_BY: Final[tuple[AnsweredBy, ...]] = get_args(AnsweredBy)
SOURCES: Final = frozenset(ANSWERED_BY)
"""The same values as a set, for a membership test on the step's hot path."""
MEANINGS: Final[dict[AnsweredBy, str]] = {
    "user_form": "a form this server showed through the client",
    "user_web": "this server's answer page",
    "user_passkey": "the answer page, signed with the person's passkey",
    "agent": "tool arguments",
    "cli": "the command line",
    "api": "a library call",
    "unknown": "recorded before this was kept",
}
"""What each source says the answers came through, in a few words (results, help, docs)."""

SOURCES_DESCRIBED: Final = ", ".join(f"{source} ({MEANINGS[source]})" for source in ANSWERED_BY)
"""Every source with its meaning, as one line for a schema's description."""

SIGNED: Final = "user_passkey"
"""The one source whose step carries a passkey proof, and the only one that may."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who supplied one step: the channel, the authenticated caller (None: unauthenticated)
    and, for a ``user_passkey`` step, its passkey proof -- what ``step`` records with it."""

    answered_by: AnsweredBy = "api"
    principal: str | None = None
    proof: PasskeyProof | None = None

    @classmethod
    def of(cls, value: AnsweredBy | Provenance) -> Provenance:
        """``value`` as a Provenance (a bare source has no principal and no proof)."""
        return value if isinstance(value, Provenance) else cls(value)


def answered_through(answered_by: AnsweredBy, proof: PasskeyProof | None = None) -> str:
    """How one recorded step was answered, in a few words for a message ("signed by Ada with
    their passkey", "answered through this server's answer page")."""
    if proof is not None:
        return f"signed by {proof.person} with their passkey"
    return "answered through " + MEANINGS[answered_by]


def check_answered_by(value: object) -> AnsweredBy:
    """``value`` if it is one of :data:`ANSWERED_BY`, else InvalidAnswers saying what to send."""
    if type(value) is str and value in SOURCES:
        return value
    requirement = "one of " + ", ".join(ANSWERED_BY)
    raise InvalidAnswers.of_field("answered_by", value, "is not a known source", requirement)


def check_provenance(answered_by: object, principal: object, proof: object) -> None:
    """InvalidAnswers naming the first of a step's provenance inputs that is wrong: a source
    not in :data:`ANSWERED_BY`, a principal that is not clean text (``principal.py``), a proof
    that is not a :class:`PasskeyProof`, or a proof without ``user_passkey`` (or the reverse):
    a signed step always carries its proof, and only a signed step does."""
    check_answered_by(answered_by)
    check_principal(principal)
    if proof is not None and type(proof) is not _passkey_proof():
        raise InvalidAnswers.of_field(
            "proof", proof, "is not a PasskeyProof", "a PasskeyProof, or null"
        )
    if (proof is None) == (answered_by == SIGNED):
        if proof is None:
            raise InvalidAnswers.of_field(
                "proof",
                proof,
                f"is missing: a {SIGNED} step carries its passkey proof",
                "the PasskeyProof the person's authenticator made for this step",
            )
        raise InvalidAnswers.of_field(
            "proof",
            proof,
            f"is given for a {answered_by} step; only a {SIGNED} step has one",
            f"answered_by {SIGNED!r} with the proof, or no proof",
        )


def _passkey_proof() -> type[PasskeyProof]:
    # The proof's model, imported only when a step carries a proof: an unsigned step (every
    # command-line step) never imports pydantic (issue 32).
    from preflight_fsm.proof import PasskeyProof

    return PasskeyProof


Source = AnsweredBy | Literal["intention"]
"""Where a decided value came from: a step's ``answered_by``, or the intention itself (the
keyword shortcut, C4, or the Description taken from it, C6)."""


def answer_steps(s: Session) -> dict[str, int]:
    """The step (0-based) that first recorded each recorded answer."""
    steps: dict[str, int] = {}
    for i, given in enumerate(s.steps):
        for key, value in given.items():
            if value is not None and key in s.answers and key not in steps:
                steps[key] = i
    # A custom value ("Keycloak" for a choice, C5) records "Other (specify)" and its text under
    # <id>__other: both came from whoever sent the value.
    for key in s.answers:
        if key not in steps and key.endswith(OTHER_SUFFIX):
            base = steps.get(key.removesuffix(OTHER_SUFFIX))
            if base is not None:
                steps[key] = base
    return steps


def answer_sources(s: Session) -> dict[str, AnsweredBy]:
    """Who supplied each recorded answer: the source of the step that first recorded it."""
    return {key: s.answered_by[i] for key, i in answer_steps(s).items()}


def deciding_steps(s: Session) -> tuple[tuple[str, int | None], ...]:
    """The step (0-based) that supplied each value of a finished session's decision (C6), in
    the patch's order and starting with ``("Category", ...)``; None where the intention decided
    it; () before the session is Done."""
    position = s.position
    if not isinstance(position, Decided):
        return ()
    engine = s.engine
    steps = answer_steps(s)
    cq = engine.category_qid

    def of(qid: str) -> int | None:
        # An "Other (specify)" choice is decided by its text: who typed the text decided it.
        if s.answers.get(qid) == engine.rules.other:
            return steps.get(qid + OTHER_SUFFIX, steps.get(qid))
        return steps.get(qid)

    decided: list[tuple[str, int | None]] = [("Category", of(cq))]
    if position.category == engine.other_category_name:
        other = engine.flow.other_category
        return (*decided, (other.field, steps.get(other.description_id)))
    category = engine.categories[position.category]
    decided.append((category.question.field, of(category.question.id)))
    decided += [(f.field, steps[f.id]) for f in category.secondary if f.id in steps]
    return tuple(decided)


def decided_by(s: Session) -> tuple[tuple[str, Source], ...]:
    """Who supplied each value of a finished session's decision (C6), in the patch's order and
    starting with ``("Category", ...)``; () before the session is Done."""
    return tuple(
        (name, "intention" if i is None else s.answered_by[i]) for name, i in deciding_steps(s)
    )
