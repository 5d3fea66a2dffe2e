"""The state an elicitation round sends through the client, sealed so it comes back unchanged.

Under protocol 2026-07-28 ``require_clarification`` asks its questions as input-required
rounds: the result carries opaque request state that the client echoes on its retry. That state
is untrusted input. The SDK already encrypts it (AES-GCM, bound to the tool, its arguments and a
time limit); this module adds what only this server knows to check: the state names the session,
the stored version and the turn it was minted for, under an HMAC-SHA256 of this server's keys
(C11's shape: seal with the first key, accept any). A state that fails either check is refused
with an ``invalid_request_state`` error and changes nothing; a session stepped by someone else
since the state was minted gets ``session_conflict``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["InvalidRoundState", "RoundSealer", "RoundState"]

_VERSION = 1


class InvalidRoundState(ValueError):
    """The round state was changed, is malformed, or was sealed under another key."""


@dataclass(frozen=True, slots=True)
class RoundState:
    """One elicitation round: the session, the stored version and turn it asks, retries so far."""

    session_id: str
    version: int
    turn: int
    retries: int = 0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class RoundSealer:
    """Seals and checks round states; ``keys[0]`` seals, any key opens (rotation).

    Without keys it uses a random key of this process: rounds then survive neither a restart nor
    a hop to another server, which the recovery hint covers (the session itself is stored).
    """

    def __init__(self, keys: Sequence[bytes] = ()) -> None:
        self._keys = tuple(keys) or (os.urandom(32),)

    def seal(self, state: RoundState) -> str:
        """``payload.mac``, both base64url: readable, but not changeable without the key."""
        payload = json.dumps(
            {
                "v": _VERSION,
                "s": state.session_id,
                "n": state.version,
                "t": state.turn,
                "r": state.retries,
            },
            separators=(",", ":"),
        ).encode()
        mac = hmac.new(self._keys[0], payload, hashlib.sha256).digest()
        return f"{_b64(payload)}.{_b64(mac)}"

    def open(self, token: object) -> RoundState:
        """The state ``token`` holds; InvalidRoundState if it is not one this server sealed."""
        if not isinstance(token, str) or token.count(".") != 1 or len(token) > 4096:
            raise InvalidRoundState("not a round state")
        body, tag = token.split(".")
        try:
            payload, mac = _unb64(body), _unb64(tag)
        except (binascii.Error, ValueError):
            raise InvalidRoundState("not base64url") from None
        if not any(
            hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).digest(), mac)
            for key in self._keys
        ):
            raise InvalidRoundState("its seal does not match")
        try:
            data = json.loads(payload)
            state = RoundState(
                session_id=data["s"], version=data["n"], turn=data["t"], retries=data["r"]
            )
        except (ValueError, KeyError, TypeError):
            raise InvalidRoundState("malformed") from None
        if data.get("v") != _VERSION or not isinstance(state.session_id, str):
            raise InvalidRoundState("malformed")
        if not all(type(n) is int for n in (state.version, state.turn, state.retries)):
            raise InvalidRoundState("malformed")
        return state
