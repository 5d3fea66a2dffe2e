"""PasskeyProof (proof.py): a frozen, bounded record of one passkey assertion."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from preflight_fsm.proof import PROOF_LIMITS, PasskeyProof

PARTS = {
    "authenticator_data": "YXV0aA",
    "client_data_json": "Y2xpZW50",
    "credential_id": "Y3JlZA",
    "person": "Ada Lovelace",
    "signature": "c2ln",
}


def test_a_proof_dumps_as_sorted_json() -> None:
    """C9: its fields are declared in sorted order, so its JSON is canonical as dumped."""
    proof = PasskeyProof(**PARTS)
    assert json.dumps(PARTS, sort_keys=True, separators=(",", ":")) == proof.model_dump_json()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("signature", "c2ln=="),  # padding is not base64url as WebAuthn's JSON gives it
        ("signature", "c2l+"),
        ("credential_id", ""),
        ("client_data_json", "A" * (PROOF_LIMITS["client_data_json"] + 1)),
        ("person", "Ada\u202eLovelace"),
        ("person", " Ada"),
        ("authenticator_data", 7),
    ],
    ids=repr,
)
def test_a_part_out_of_bounds_or_form_is_refused(field: str, value: Any) -> None:
    """Untrusted input: each part is base64url within its limit, the person a clean name."""
    with pytest.raises(ValidationError):
        PasskeyProof(**{**PARTS, field: value})


def test_an_unknown_part_is_refused() -> None:
    """A proof holds exactly its five parts."""
    with pytest.raises(ValidationError):
        PasskeyProof(**PARTS, counter="1")  # type: ignore[call-arg]


def test_a_proof_is_frozen() -> None:
    """A recorded proof cannot change after the step recorded it."""
    proof = PasskeyProof(**PARTS)
    with pytest.raises(ValidationError):
        proof.person = "Mallory"  # type: ignore[misc]
