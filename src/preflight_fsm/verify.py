"""Verifying decision files offline (``preflight-fsm verify``): with only the repository, is a
decision what its attested inputs produce, signed by people the people file lists, and made
under the policy a team requires?

For each file: its record (``decision_record.py``) is found from its end; the attested inputs
(``attestation.py``) are replayed through the engine on the flow they name, and the whole file
must then be, byte for byte, its text above the record (whose SHA-256 the statement holds) plus
the record those inputs produce; every ``user_passkey`` step's assertion must verify
(``passkeys.py``) with a credential of the people file over that step's challenge; and every
step must meet ``--require``.

Outcomes and exit codes (the command exits with the most severe one among its files):

=================  ====  ===========================================================
outcome            code  meaning
=================  ====  ===========================================================
``verified``          0  the record holds and meets the policy
``unsigned``         10  the file ends with no decision record
``policy_not_met``   11  the record holds, but a step was not answered as required
``unreadable``       12  the file, its flow or the people file cannot be read
``unknown_signer``   13  a signature does not verify with anyone in the people file
``tampered``         14  the file or its record changed after it was written
=================  ====  ===========================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from preflight_fsm.answered_by import SIGNED, AnsweredBy
from preflight_fsm.attestation import (
    AttestationError,
    parse_statement,
    replayed,
    subject_name,
)
from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.decision_record import (
    ATTESTATION_OPEN,
    MAX_DECISION_FILE_BYTES,
    RECORD_MARKER,
    compose,
    neutralise,
    section,
    split,
)
from preflight_fsm.errors import InvalidPeopleFile, PasskeyRefused
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.passkeys import signing_challenge, verify_assertion
from preflight_fsm.people import People

__all__ = [
    "EXIT_CODES",
    "MAX_DECISION_FILE_BYTES",
    "REQUIREMENTS",
    "Outcome",
    "Requirement",
    "Verdict",
    "verify_path",
    "verify_text",
]

Outcome = Literal[
    "verified", "unsigned", "policy_not_met", "unreadable", "unknown_signer", "tampered"
]
EXIT_CODES: Final[dict[Outcome, int]] = {
    "verified": 0,
    "unsigned": 10,
    "policy_not_met": 11,
    "unreadable": 12,
    "unknown_signer": 13,
    "tampered": 14,
}
"""Each outcome's exit code; a higher code is a more severe outcome."""

Requirement = Literal["any", "user", "person"]
REQUIREMENTS: Final[dict[Requirement, frozenset[str]]] = {
    "any": frozenset(),
    "user": frozenset({"user_form", "user_web", "user_passkey"}),
    "person": frozenset({SIGNED}),
}
"""What each ``--require`` level accepts as a step's ``answered_by`` (``any``: every source)."""


# Signature refusals that depend on the people file: nobody listed there made the assertion.
_SIGNER_REASONS: Final = frozenset(
    {"unknown_credential", "wrong_person", "bad_signature", "wrong_origin", "wrong_rp_id"}
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One file's outcome, its one-line reason, and what the record says when it holds."""

    path: str
    outcome: Outcome
    reason: str
    session_id: str | None = None
    answered_by: tuple[AnsweredBy, ...] = ()
    signers: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """The outcome's exit code (:data:`EXIT_CODES`)."""
        return EXIT_CODES[self.outcome]

    def to_json(self) -> dict[str, Any]:
        """As ``verify --json`` lists it."""
        return {
            "path": self.path,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "session_id": self.session_id,
            "answered_by": list(self.answered_by),
            "signers": list(self.signers),
        }


def verify_path(
    path: Path,
    *,
    flows: FlowRegistry,
    people: Callable[[], People],
    require: Requirement = "any",
) -> Verdict:
    """The verdict on the decision file at ``path`` (``people`` loads the people file when a
    signature needs it)."""
    shown = str(path)
    try:
        text = read_bounded(path, MAX_DECISION_FILE_BYTES).decode("utf-8")
    except Unreadable as exc:
        return Verdict(shown, "unreadable", f"the file {exc.problem}")
    except UnicodeDecodeError:
        return Verdict(shown, "unreadable", "the file is not UTF-8 text")
    except IsADirectoryError:
        return Verdict(shown, "unreadable", "is a directory; name the files (docs/adr/*.md)")
    except OSError as exc:
        return Verdict(shown, "unreadable", f"cannot be read ({exc.strerror or exc})")
    return verify_text(text, path=shown, flows=flows, people=people, require=require)


def verify_text(
    text: str,
    *,
    path: str,
    flows: FlowRegistry,
    people: Callable[[], People],
    require: Requirement = "any",
) -> Verdict:
    """The verdict on a decision file's ``text`` (this module's docstring)."""
    parts = split(text)
    if parts is None:
        if RECORD_MARKER in text or ATTESTATION_OPEN in text:
            return Verdict(path, "tampered", "its decision record is damaged or not at its end")
        return Verdict(path, "unsigned", "it ends with no decision record")
    try:
        statement = parse_statement(parts.statement)
    except AttestationError as exc:
        return Verdict(path, "tampered", f"its attestation cannot be read: {exc}")
    predicate = statement.predicate
    session_id = predicate.session_id
    answered_by = tuple(step.answered_by for step in predicate.steps)

    def verdict(outcome: Outcome, reason: str, signers: tuple[str, ...] = ()) -> Verdict:
        return Verdict(path, outcome, reason, session_id, answered_by, signers)

    if statement.subject[0].digest.sha256 != parts.head_digest:
        return verdict(
            "tampered", "the text above the decision record changed after it was written"
        )
    if neutralise(parts.head) != parts.head:
        return verdict("tampered", "the text above the record imitates the Who answered record")
    if flows.get(predicate.flow.fingerprint) is None:
        return verdict(
            "unreadable",
            f"its flow {predicate.flow.name!r} ({predicate.flow.fingerprint}) is not registered "
            "here; name the flow file it ran on with --flow",
        )
    try:
        machine = replayed(statement, flows)
    except AttestationError as exc:
        return verdict("tampered", f"its attested inputs do not replay: {exc}")
    if statement.subject[0].name != subject_name(session_id):
        return verdict("tampered", "its subject is not the decision of its session")
    rebuilt = section(machine, statement)
    if not rebuilt:
        return verdict("tampered", "its attested inputs reach no decision")
    if compose(parts.head, rebuilt, statement) != text:
        which = "Who answered section" if rebuilt != parts.section else "attestation"
        return verdict(
            "tampered", f"its {which} is not what the attested inputs produce, byte for byte"
        )
    signers: list[str] = []
    for number, step in enumerate(predicate.steps, start=1):
        if step.proof is None:
            continue
        try:
            listed = people()
        except InvalidPeopleFile as exc:
            return verdict("unreadable", f"step {number} is signed, but {exc}")
        challenge, *also = (
            signing_challenge(session_id, number, step.answers, fingerprint)
            for fingerprint in flows.aliases(predicate.flow.fingerprint)
        )
        try:
            signers.append(verify_assertion(listed, step.proof, challenge, also))
        except PasskeyRefused as exc:
            outcome: Outcome = "unknown_signer" if exc.reason in _SIGNER_REASONS else "tampered"
            return verdict(outcome, f"step {number}'s passkey signature is refused: {exc}")
    unique = tuple(dict.fromkeys(signers))
    accepted = REQUIREMENTS[require]
    if accepted:
        short = [
            f"step {n} ({source})"
            for n, source in enumerate(answered_by, start=1)
            if source not in accepted
        ]
        if short:
            return verdict(
                "policy_not_met",
                f"--require {require} accepts only {', '.join(sorted(accepted))}: "
                + ", ".join(short),
                unique,
            )
    signed = f", signed by {', '.join(unique)}" if unique else ""
    steps = len(predicate.steps)
    return verdict(
        "verified",
        f"{steps} step{'s' if steps != 1 else ''} replayed byte for byte{signed}",
        unique,
    )
