"""Passkeys (WebAuthn) for signed steps: the challenge a step is signed over, enrollment, and the
verification of a signed step's proof against the people file (``people.py``).

The WebAuthn work (COSE keys, attestation formats, signatures) is py_webauthn's (the ``web``
extra); this module decides what is signed and what counts. Each function imports py_webauthn
itself: with cryptography and pyOpenSSL it is about 0.2 s of a server's start, which a server
that builds an answer page but is never asked to sign or enroll does not pay.

**The challenge** of a step is ``challenge.py``'s (it needs no WebAuthn library: Preflights'
integration computes it with the ``preflights`` extra alone); this module re-exports it.

Offline verification has no memory of signature counters, so a cloned authenticator is not
detected here (the answer page keeps them, ``sign_counts.py``; docs/contract.md says what a
passkey proves).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from preflight_fsm.challenge import CHALLENGE_TYPE, signing_challenge, step_challenge
from preflight_fsm.errors import PasskeyRefused
from preflight_fsm.people import People, Person
from preflight_fsm.proof import PasskeyProof

__all__ = [
    "CHALLENGE_TYPE",
    "assertion_options",
    "proof_of",
    "registration_options",
    "sign_count",
    "signing_challenge",
    "step_challenge",
    "verify_assertion",
    "verify_registration",
]

# -- enrollment ------------------------------------------------------------------------------


def registration_options(
    *, rp_id: str, rp_name: str, name: str, challenge: bytes, people: People | None = None
) -> str:
    """The JSON options for ``navigator.credentials.create()`` that enroll ``name``: a
    discoverable credential if the authenticator can, user verification required, and the
    credentials already in ``people`` excluded."""
    from webauthn import generate_registration_options, options_to_json
    from webauthn.helpers import base64url_to_bytes
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    exclude = [
        PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
        for p in (people or ())
        if p.rp_id == rp_id
    ]
    options = generate_registration_options(
        rp_id=rp_id,
        rp_name=rp_name,
        user_name=name,
        user_id=hashlib.sha256(name.encode("utf-8")).digest()[:32],
        challenge=challenge,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=exclude,
    )
    return options_to_json(options)


def verify_registration(
    response: str | Mapping[str, Any],
    *,
    name: str,
    expected_challenge: bytes,
    rp_id: str,
    origin: str,
) -> Person:
    """The :class:`Person` a ``navigator.credentials.create()`` response enrolls, its user
    verified; PasskeyRefused (reason ``malformed``, ``wrong_challenge``, ``wrong_origin``,
    ``wrong_rp_id``, ``user_not_verified`` or ``bad_signature``) otherwise."""
    from webauthn import verify_registration_response
    from webauthn.helpers import bytes_to_base64url
    from webauthn.helpers.exceptions import InvalidRegistrationResponse

    try:
        verified = verify_registration_response(
            credential=response if isinstance(response, str) else dict(response),
            expected_challenge=expected_challenge,
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_verification=True,
        )
    except InvalidRegistrationResponse as exc:
        raise PasskeyRefused(_registration_reason(str(exc)), f"enrollment refused: {exc}") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise PasskeyRefused(
            "malformed", f"enrollment refused: unreadable response ({exc})"
        ) from None
    return Person(
        name=name,
        credential_id=bytes_to_base64url(verified.credential_id),
        public_key=bytes_to_base64url(verified.credential_public_key),
        rp_id=rp_id,
        origins=(origin,),
    )


def _registration_reason(message: str) -> str:
    for needle, reason in (
        ("challenge", "wrong_challenge"),
        ("origin", "wrong_origin"),
        ("RP ID", "wrong_rp_id"),
        ("verif", "user_not_verified"),
        ("signature", "bad_signature"),
    ):
        if needle in message:
            return reason
    return "malformed"


# -- signing a step ---------------------------------------------------------------------------


def assertion_options(*, rp_id: str, challenge: bytes, credential_ids: Iterable[str]) -> str:
    """The JSON options for ``navigator.credentials.get()`` that sign ``challenge`` with one of
    ``credential_ids`` (the people file's, for ``rp_id``), user verification required."""
    from webauthn import generate_authentication_options, options_to_json
    from webauthn.helpers import base64url_to_bytes
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

    options = generate_authentication_options(
        rp_id=rp_id,
        challenge=challenge,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in credential_ids
        ],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    return options_to_json(options)


def proof_of(response: str | Mapping[str, Any], people: People) -> PasskeyProof:
    """The :class:`PasskeyProof` of a ``navigator.credentials.get()`` response (its JSON, as
    the page posts it), for the person the people file lists for its credential; PasskeyRefused
    (``unknown_credential``, ``malformed``) otherwise. It is not verified here:
    :func:`verify_assertion` does that."""
    try:
        data = json.loads(response) if isinstance(response, str) else dict(response)
        inner = data["response"]
        credential_id = data["id"]
        person = people.by_credential(credential_id) if isinstance(credential_id, str) else None
        if person is None:
            raise PasskeyRefused(
                "unknown_credential",
                "the passkey is not in the people file; enroll it (preflight-fsm people enroll)",
            )
        return PasskeyProof(
            person=person.name,
            credential_id=credential_id,
            authenticator_data=inner["authenticatorData"],
            client_data_json=inner["clientDataJSON"],
            signature=inner["signature"],
        )
    except (ValueError, TypeError, KeyError, AttributeError, ValidationError) as exc:
        raise PasskeyRefused("malformed", f"the passkey response is unreadable ({exc})") from None


def verify_assertion(
    people: People, proof: PasskeyProof, expected_challenge: bytes, also: Collection[bytes] = ()
) -> str:
    """The name of the person whose passkey made ``proof`` over ``expected_challenge`` (or one
    of ``also``: the same step on each fingerprint its flow answers to, D261), or
    PasskeyRefused whose ``reason`` says why not (``unknown_credential``, ``wrong_person``,
    ``malformed``, ``wrong_challenge``, ``wrong_origin``, ``wrong_rp_id``,
    ``user_not_verified``, ``bad_signature``)."""
    from webauthn import verify_authentication_response
    from webauthn.helpers import (
        base64url_to_bytes,
        bytes_to_base64url,
        parse_authenticator_data,
        parse_client_data_json,
    )
    from webauthn.helpers.exceptions import InvalidAuthenticationResponse
    from webauthn.helpers.structs import ClientDataType

    person = people.by_credential(proof.credential_id)
    if person is None:
        raise PasskeyRefused(
            "unknown_credential",
            f"credential {_short(proof.credential_id)} is not in the people file "
            f"({people.source}): nobody listed there signed this step",
        )
    if person.name != proof.person:
        raise PasskeyRefused(
            "wrong_person",
            f"the proof names {proof.person!r}, but the people file lists its credential as "
            f"{person.name!r}'s",
        )
    parts = (proof.credential_id, proof.authenticator_data, proof.client_data_json, proof.signature)
    if any(bytes_to_base64url(base64url_to_bytes(part)) != part for part in parts):
        raise PasskeyRefused("malformed", "a part of the proof is not canonical base64url")
    try:
        client = parse_client_data_json(base64url_to_bytes(proof.client_data_json))
        authenticator = parse_authenticator_data(base64url_to_bytes(proof.authenticator_data))
    except Exception as exc:  # py_webauthn raises its own and the decoders' errors
        raise PasskeyRefused("malformed", f"the assertion cannot be read ({exc})") from None
    if client.type != ClientDataType.WEBAUTHN_GET:
        raise PasskeyRefused("malformed", f"the client data is a {client.type!r}, not an assertion")
    if client.challenge != expected_challenge and client.challenge not in also:
        raise PasskeyRefused(
            "wrong_challenge",
            "the passkey signed another challenge: the proof belongs to another session, step, "
            "answers or flow",
        )
    if client.origin not in person.origins:
        raise PasskeyRefused(
            "wrong_origin",
            f"signed on {client.origin!r}, not on an origin {person.name!r} enrolled on",
        )
    if authenticator.rp_id_hash != hashlib.sha256(person.rp_id.encode("utf-8")).digest():
        raise PasskeyRefused(
            "wrong_rp_id", f"signed for another relying party than {person.rp_id!r}"
        )
    if not (authenticator.flags.up and authenticator.flags.uv):
        raise PasskeyRefused(
            "user_not_verified",
            "the authenticator did not verify the person (PIN or biometric); it is required",
        )
    try:
        verify_authentication_response(
            credential={
                "id": proof.credential_id,
                "rawId": proof.credential_id,
                "type": "public-key",
                "response": {
                    "authenticatorData": proof.authenticator_data,
                    "clientDataJSON": proof.client_data_json,
                    "signature": proof.signature,
                },
            },
            expected_challenge=client.challenge,  # one of those accepted, checked above
            expected_rp_id=person.rp_id,
            expected_origin=list(person.origins),
            credential_public_key=base64url_to_bytes(person.public_key),
            credential_current_sign_count=0,  # offline: no counter is kept (module docstring)
            require_user_verification=True,
        )
    except (InvalidAuthenticationResponse, ValueError, TypeError, KeyError) as exc:
        raise PasskeyRefused(
            "bad_signature",
            f"the signature does not verify with the key the people file lists for "
            f"{person.name!r} ({exc}): the record or the people file changed after signing",
        ) from None
    return person.name


def sign_count(proof: PasskeyProof) -> int:
    """The signature counter the authenticator reported in ``proof`` (0: it keeps none);
    PasskeyRefused ``malformed`` when its authenticator data cannot be read."""
    from webauthn.helpers import base64url_to_bytes, parse_authenticator_data

    try:
        return parse_authenticator_data(base64url_to_bytes(proof.authenticator_data)).sign_count
    except Exception as exc:  # py_webauthn raises its own and the decoders' errors
        raise PasskeyRefused("malformed", f"the assertion cannot be read ({exc})") from None


def _short(text: str) -> str:
    return text if len(text) <= 24 else text[:21] + "..."
