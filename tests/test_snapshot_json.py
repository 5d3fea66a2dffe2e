"""The snapshot's JSON text written from the session's plain data (C9, issue 32): the very text
the model writes, so stores keep the same bytes, digests and seals whichever path wrote them."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import ClarificationMachine, SealKeys, SessionSnapshot, default_flow
from preflight_fsm.snapshot.model import FIELDS
from test_properties import PROOF, advanced, intentions, well_formed

KEY = SealKeys((b"k" * 32,))


@given(intentions, st.lists(well_formed, max_size=4), st.booleans())
def test_the_plain_snapshot_text_is_the_models_text(
    intention: str, steps: list[dict[str, Any]], sealed: bool
) -> None:
    """Any session, stepped through every source with principals and a passkey proof, sealed or
    not: ``snapshot_json`` writes what ``snapshot().model_dump_json()`` writes, byte for byte."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    keys = KEY if sealed else None
    assert machine.snapshot(seal=keys).model_dump_json() == machine.snapshot_json(seal=keys)


def test_the_plain_snapshot_text_escapes_as_the_model_does() -> None:
    """Quotes, backslashes and text beyond ASCII in the intention, an owner and a signed step."""
    machine = ClarificationMachine('Add "OAuth" login \\ für Ærø 🔐', default_flow(), owner="ada")
    machine.step({"auth_strategy": "OAuth"}, "user_passkey", principal="ada", proof=PROOF)
    assert machine.snapshot(seal=KEY).model_dump_json() == machine.snapshot_json(seal=KEY)


def test_the_snapshot_fields_are_listed_in_the_models_order() -> None:
    """``FIELDS``, which orders the plain text's keys, names the model's fields in its order."""
    assert tuple(SessionSnapshot.model_fields) == FIELDS
