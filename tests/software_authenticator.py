"""A software passkey for tests: an EC P-256 key that answers WebAuthn ceremonies as a browser
and a platform authenticator would (authenticatorData, clientDataJSON, a "none" attestation),
with real ECDSA signatures; deterministic for a given seed."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from preflight_fsm.people import Person

RP_ID = "localhost"
ORIGIN = "http://localhost:8765"
_UP, _UV, _AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


class SoftwareAuthenticator:
    """One credential on one relying party; ``sign`` makes an assertion over a challenge."""

    def __init__(self, seed: int = 1, rp_id: str = RP_ID, origin: str = ORIGIN) -> None:
        self.key = ec.derive_private_key(0x5EED0000 + seed, ec.SECP256R1())
        self.credential_id = hashlib.sha256(f"credential {seed}".encode()).digest()[:16]
        self.rp_id = rp_id
        self.origin = origin
        self.sign_count = 0

    @property
    def cose_public_key(self) -> bytes:
        """The credential's public key as COSE (EC2, P-256, ES256)."""
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps(
            {
                1: 2,
                3: -7,
                -1: 1,
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        )

    def person(self, name: str) -> Person:
        """The people-file entry this credential enrolls as ``name``."""
        return Person(
            name=name,
            credential_id=b64url(self.credential_id),
            public_key=b64url(self.cose_public_key),
            rp_id=self.rp_id,
            origins=(self.origin,),
        )

    def _client_data(self, kind: str, challenge: bytes, origin: str | None) -> bytes:
        data = {"type": kind, "challenge": b64url(challenge), "origin": origin or self.origin}
        return json.dumps({**data, "crossOrigin": False}, separators=(",", ":")).encode()

    def _auth_data(self, flags: int, rp_id: str | None, attested: bytes = b"") -> bytes:
        self.sign_count += 1
        rp_hash = hashlib.sha256((rp_id or self.rp_id).encode()).digest()
        return rp_hash + bytes([flags]) + struct.pack(">I", self.sign_count) + attested

    def register(self, challenge: bytes, *, verified: bool = True) -> dict[str, Any]:
        """The RegistrationResponseJSON of ``navigator.credentials.create()``."""
        attested = (
            bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id
        ) + self.cose_public_key
        flags = _UP | _AT | (_UV if verified else 0)
        auth_data = self._auth_data(flags, None, attested)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {
            "id": b64url(self.credential_id),
            "rawId": b64url(self.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(self._client_data("webauthn.create", challenge, None)),
                "attestationObject": b64url(attestation),
            },
            "clientExtensionResults": {},
        }

    def sign(
        self,
        challenge: bytes,
        *,
        verified: bool = True,
        origin: str | None = None,
        rp_id: str | None = None,
    ) -> dict[str, Any]:
        """The AuthenticationResponseJSON of ``navigator.credentials.get()`` over ``challenge``."""
        auth_data = self._auth_data(_UP | (_UV if verified else 0), rp_id)
        client_data = self._client_data("webauthn.get", challenge, origin)
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(self.credential_id),
            "rawId": b64url(self.credential_id),
            "type": "public-key",
            "response": {
                "authenticatorData": b64url(auth_data),
                "clientDataJSON": b64url(client_data),
                "signature": b64url(signature),
            },
            "clientExtensionResults": {},
        }
