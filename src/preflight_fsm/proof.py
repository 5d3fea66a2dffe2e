"""A passkey proof (C9): the WebAuthn assertion a person's authenticator made for one step.

A ``user_passkey`` step records it, inside the digest and the seal, so anyone holding the people
file (``people.py``) can check offline who signed which answers (``passkeys.py`` verifies it).
Every part is base64url without padding, as WebAuthn's JSON gives it, and bounded: a proof is
untrusted input wherever it is read.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from preflight_fsm.principal import MAX_PRINCIPAL, principal_problem

__all__ = ["PROOF_LIMITS", "PasskeyProof"]

_B64URL: Final = r"^[A-Za-z0-9_-]+$"

# WebAuthn caps a credential id at 1023 bytes: 1364 base64url characters. Authenticator data
# is 37 bytes without extensions; client data is the browser's short JSON (type, challenge,
# origin, crossOrigin); an ES256 signature is at most 72 bytes, an RS256 one with a 4096-bit
# key 512 (683 characters).
PROOF_LIMITS: Final = {
    "credential_id": 1364,
    "authenticator_data": 1024,
    "client_data_json": 2048,
    "signature": 1024,
}
"""The longest each base64url part may be, in characters."""

_CredentialId = Annotated[
    StrictStr, Field(min_length=1, max_length=PROOF_LIMITS["credential_id"], pattern=_B64URL)
]
_AuthenticatorData = Annotated[
    StrictStr, Field(min_length=1, max_length=PROOF_LIMITS["authenticator_data"], pattern=_B64URL)
]
_ClientDataJson = Annotated[
    StrictStr, Field(min_length=1, max_length=PROOF_LIMITS["client_data_json"], pattern=_B64URL)
]
_Signature = Annotated[
    StrictStr, Field(min_length=1, max_length=PROOF_LIMITS["signature"], pattern=_B64URL)
]


class PasskeyProof(BaseModel):
    """Who signed a step and the assertion their passkey made over its challenge.

    The fields are declared in sorted order, so the JSON a snapshot holds is canonical as it is
    dumped (``snapshot/model.py``'s digest covers it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    authenticator_data: _AuthenticatorData
    client_data_json: _ClientDataJson
    credential_id: _CredentialId
    person: Annotated[StrictStr, Field(max_length=MAX_PRINCIPAL)]
    signature: _Signature

    @field_validator("person")
    @classmethod
    def _clean_name(cls, value: str) -> str:
        problem = principal_problem(value)
        if problem is not None:
            raise ValueError(f"the person's name {problem}")
        return value
