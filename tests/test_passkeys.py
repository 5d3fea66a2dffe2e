"""passkeys.py: the step challenge, enrollment and verification, with real signatures made by a
software authenticator (tests/software_authenticator.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from preflight_fsm import ClarificationMachine
from preflight_fsm.errors import PasskeyRefused
from preflight_fsm.passkeys import (
    assertion_options,
    proof_of,
    registration_options,
    signing_challenge,
    step_challenge,
    verify_assertion,
    verify_registration,
)
from preflight_fsm.people import People
from software_authenticator import ORIGIN, RP_ID, SoftwareAuthenticator, b64url

ADA = SoftwareAuthenticator(seed=1)
GRACE = SoftwareAuthenticator(seed=2)
PEOPLE = People((ADA.person("Ada Lovelace"), GRACE.person("Grace Hopper")))
SESSION = "2f6c8a1e-0000-4000-8000-000000000001"
FINGERPRINT = "933558696d03ac0d"
CHALLENGE = signing_challenge(SESSION, 1, {"auth_strategy": "OAuth"}, FINGERPRINT)


def signed(authenticator: SoftwareAuthenticator, challenge: bytes, **options: Any) -> Any:
    return proof_of(authenticator.sign(challenge, **options), PEOPLE)


def refusal(proof: Any, challenge: bytes = CHALLENGE, people: People = PEOPLE) -> str:
    with pytest.raises(PasskeyRefused) as info:
        verify_assertion(people, proof, challenge)
    return info.value.reason


def test_the_challenge_is_the_documented_digest() -> None:
    """The encoding is the module docstring's: SHA-256 of sorted, compact JSON in UTF-8."""
    content = {
        "type": "preflight-fsm/step/v1",
        "session_id": SESSION,
        "step": 1,
        "answers": {"auth_strategy": "OAuth"},
        "flow_fingerprint": FINGERPRINT,
    }
    encoded = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(encoded.encode()).digest() == CHALLENGE


@pytest.mark.parametrize(
    "other",
    [
        ("another-session", 1, {"auth_strategy": "OAuth"}, FINGERPRINT),
        (SESSION, 2, {"auth_strategy": "OAuth"}, FINGERPRINT),
        (SESSION, 1, {"auth_strategy": "Magic Link"}, FINGERPRINT),
        (SESSION, 1, {"auth_strategy": "OAuth", "auth_library": "Auth.js"}, FINGERPRINT),
        (SESSION, 1, {"auth_strategy": "OAuth"}, "0000000000000000"),
    ],
    ids=["session", "step", "answer", "added-answer", "flow"],
)
def test_the_challenge_binds_session_step_answers_and_flow(other: Any) -> None:
    """Change any one input and the challenge is another."""
    assert CHALLENGE != signing_challenge(*other)


def test_a_real_assertion_verifies_to_its_person() -> None:
    """A signature the person's authenticator made over the challenge names them."""
    assert "Ada Lovelace" == verify_assertion(PEOPLE, signed(ADA, CHALLENGE), CHALLENGE)


def test_an_assertion_moved_to_another_step_is_refused_as_the_wrong_challenge() -> None:
    """Signed for step 1, presented for step 2: refused."""
    step_two = signing_challenge(SESSION, 2, {"auth_strategy": "OAuth"}, FINGERPRINT)
    assert "wrong_challenge" == refusal(signed(ADA, CHALLENGE), step_two)


def test_a_credential_not_in_the_people_file_is_refused() -> None:
    """Only listed people sign: a stranger's passkey is an unknown credential."""
    stranger = SoftwareAuthenticator(seed=9)
    proof = signed(ADA, CHALLENGE).model_copy(
        update={"credential_id": b64url(stranger.credential_id)}
    )
    assert "unknown_credential" == refusal(proof)


def test_a_proof_naming_another_person_is_refused() -> None:
    """Ada's assertion relabelled as Grace's is refused: the people file says whose it is."""
    proof = signed(ADA, CHALLENGE).model_copy(update={"person": "Grace Hopper"})
    assert "wrong_person" == refusal(proof)


def test_a_changed_signature_is_refused() -> None:
    """One byte of the signature changed: it no longer verifies."""
    proof = signed(ADA, CHALLENGE)
    grace = signed(GRACE, CHALLENGE)
    assert "bad_signature" == refusal(proof.model_copy(update={"signature": grace.signature}))


def test_a_people_file_whose_key_changed_after_signing_refuses_the_signature() -> None:
    """The credential's public key replaced in the people file: the signature fails with it."""
    edited = People((replace(ADA.person("Ada Lovelace"), public_key=GRACE.person("x").public_key),))
    assert "bad_signature" == refusal(signed(ADA, CHALLENGE), people=edited)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"verified": False}, "user_not_verified"),
        ({"origin": "http://localhost:9999"}, "wrong_origin"),
        ({"rp_id": "evil.example"}, "wrong_rp_id"),
    ],
    ids=["no-uv", "origin", "rp-id"],
)
def test_an_assertion_outside_the_enrolled_terms_is_refused(
    options: dict[str, Any], reason: str
) -> None:
    """User verification is required; the origin and RP id must be those of the enrollment."""
    assert reason == refusal(signed(ADA, CHALLENGE, **options))


def test_a_response_from_an_unknown_passkey_gives_no_proof() -> None:
    """proof_of names no person for a credential the file does not list."""
    with pytest.raises(PasskeyRefused) as info:
        proof_of(SoftwareAuthenticator(seed=9).sign(CHALLENGE), PEOPLE)
    assert "unknown_credential" == info.value.reason


def test_enrollment_verifies_the_registration_and_gives_the_people_file_entry() -> None:
    """A real registration response enrolls the credential with its COSE public key."""
    authenticator = SoftwareAuthenticator(seed=5)
    challenge = b"e" * 32
    person = verify_registration(
        authenticator.register(challenge),
        name="Katherine Johnson",
        expected_challenge=challenge,
        rp_id=RP_ID,
        origin=ORIGIN,
    )
    assert authenticator.person("Katherine Johnson") == person


@pytest.mark.parametrize(
    ("verified", "challenge", "reason"),
    [(False, b"e" * 32, "user_not_verified"), (True, b"f" * 32, "wrong_challenge")],
    ids=["no-uv", "challenge"],
)
def test_an_enrollment_without_verification_or_for_another_challenge_is_refused(
    verified: bool, challenge: bytes, reason: str
) -> None:
    """Enrollment requires user verification and the challenge the page issued."""
    response = SoftwareAuthenticator(seed=5).register(challenge, verified=verified)
    with pytest.raises(PasskeyRefused) as info:
        verify_registration(
            response, name="K", expected_challenge=b"e" * 32, rp_id=RP_ID, origin=ORIGIN
        )
    assert reason == info.value.reason


def test_the_options_require_user_verification() -> None:
    """Both ceremonies ask the authenticator to verify the person."""
    create = json.loads(registration_options(rp_id=RP_ID, rp_name="x", name="A", challenge=b"c"))
    get = json.loads(
        assertion_options(
            rp_id=RP_ID, challenge=b"c", credential_ids=[ADA.person("A").credential_id]
        )
    )
    assert ("required", "required") == (
        create["authenticatorSelection"]["userVerification"],
        get["userVerification"],
    )


def test_a_signed_step_records_and_verifies_end_to_end() -> None:
    """The page's path: the step's challenge over the answers as recorded, the person signs,
    the step records user_passkey with the proof, and the proof verifies from the snapshot."""
    machine = ClarificationMachine("Add OAuth login", owner="ada")
    answers = {"auth_strategy": "  oauth "}
    challenge = step_challenge(machine, SESSION, answers)
    recorded = {"auth_strategy": "oauth"}  # white space collapsed; the step's input as typed
    assert signing_challenge(SESSION, 1, recorded, machine.flow.fingerprint) == challenge
    proof = proof_of(ADA.sign(challenge), PEOPLE)
    machine.step(answers, "user_passkey", principal="ada", proof=proof)
    restored = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
    kept = restored.proofs[0]
    assert kept is not None
    assert "Ada Lovelace" == verify_assertion(PEOPLE, kept, challenge)


# A fresh interpreter that cannot import py_webauthn loads what a server building an answer page
# loads (the page, the signing page, the command line's page helpers): none asks for it.
_PAGES_WITHOUT_WEBAUTHN = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "webauthn":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
import preflight_fsm.cli.web, preflight_fsm.passkeys, preflight_fsm.web, preflight_fsm.web.signing
"""


def test_the_answer_pages_load_without_py_webauthn_until_a_passkey_is_used() -> None:
    """py_webauthn (with cryptography and pyOpenSSL, about 0.2 s of a server's start) is imported
    by the passkey functions that use it, not by the pages every MCP server builds."""
    done = subprocess.run(
        [sys.executable, "-c", _PAGES_WITHOUT_WEBAUTHN], capture_output=True, text=True, timeout=60
    )
    assert 0 == done.returncode, done.stderr
