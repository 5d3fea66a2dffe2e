"""The elicitation round state: readable, but refused once changed or sealed by another key."""

from __future__ import annotations

import pytest

from preflight_fsm.mcp.request_state import InvalidRoundState, RoundSealer, RoundState

KEY, OTHER = b"k" * 32, b"o" * 32
STATE = RoundState("5b0f3c1e-8d2a", version=3, turn=2, retries=1)


def test_a_sealed_state_opens_to_itself() -> None:
    sealer = RoundSealer([KEY])
    assert STATE == sealer.open(sealer.seal(STATE))


def test_a_state_sealed_by_the_first_key_opens_under_a_rotated_ring() -> None:
    assert STATE == RoundSealer([OTHER, KEY]).open(RoundSealer([KEY]).seal(STATE))


def _changed_payload(token: str) -> str:
    import base64
    import json

    body, tag = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    data["n"] = 99  # claim another stored version
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return f"{forged}.{tag}"


TAMPERED = [
    ("another key", lambda t: RoundSealer([OTHER]).seal(STATE)),
    ("a changed payload", _changed_payload),
    ("a cut seal", lambda t: t[:-4]),
    ("no seal", lambda t: t.split(".")[0]),
    ("not base64", lambda t: "!!!." + t.split(".")[1]),
    ("empty", lambda t: ""),
    ("not text", lambda t: 42),
    ("huge", lambda t: "a" * 10_000 + "." + "b"),
]


@pytest.mark.parametrize("tamper", [c[1] for c in TAMPERED], ids=[c[0] for c in TAMPERED])
def test_a_tampered_state_is_refused(tamper: object) -> None:
    sealer = RoundSealer([KEY])
    token = sealer.seal(STATE)
    with pytest.raises(InvalidRoundState):
        sealer.open(tamper(token))  # type: ignore[operator]


def test_without_keys_each_process_seals_with_its_own_random_key() -> None:
    with pytest.raises(InvalidRoundState):
        RoundSealer().open(RoundSealer().seal(STATE))
