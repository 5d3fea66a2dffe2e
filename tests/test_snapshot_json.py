"""The snapshot's JSON text written from the session's plain data (C9, issue 32): the very text
the model writes, so stores keep the same bytes, digests and seals whichever path wrote them."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import ClarificationMachine, SealKeys, SessionSnapshot, default_flow
from preflight_fsm import snapshot as snapshot_package
from preflight_fsm.snapshot.json_form import FIELDS, signed_json
from preflight_fsm.snapshot.model import canonical_content
from test_properties import PROOF, advanced, intentions, standard_json, well_formed

KEY = SealKeys((b"k" * 32,))


@given(intentions, st.lists(well_formed, max_size=4), st.booleans(), st.booleans())
def test_the_plain_snapshot_text_is_the_models_text(
    intention: str, steps: list[dict[str, Any]], sealed: bool, plain: bool
) -> None:
    """Any session, stepped through every source with principals and a passkey proof, sealed or
    not: ``snapshot_json`` writes what ``snapshot().model_dump_json()`` writes, byte for byte,
    its digest's canonical JSON written by pydantic-core or by the standard library."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    keys = KEY if sealed else None
    expected = machine.snapshot(seal=keys).model_dump_json()
    with standard_json(plain):
        assert expected == machine.snapshot_json(seal=keys)


@given(intentions, st.lists(well_formed, max_size=4))
def test_the_standard_librarys_canonical_json_is_pydantic_cores(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C9: the digest's canonical JSON, written by the standard library (a command's process)
    or by pydantic-core (a server's), is the same bytes for any session: no digest or seal
    depends on which process wrote it."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    snapshot = machine.snapshot()
    dumped = snapshot.model_dump(mode="json")
    values = [dumped[name] for name in ("answered_by", "flow_fingerprint", "intention", "owner")]
    rest = [dumped[name] for name in ("principals", "proofs", "schema_version", "steps")]
    with standard_json():
        plain = signed_json(*values, *rest)
    assert canonical_content(snapshot) == plain


def test_every_name_of_the_snapshot_package_is_its_homes() -> None:
    """The lazy names (``snapshot/__init__.py``): one home each, every one listed in
    ``__all__``, and each the object its home module holds."""
    homes = snapshot_package._HOMES
    assert sorted(snapshot_package.__all__) == sorted(homes)
    for name, home in homes.items():
        assert getattr(importlib.import_module(home), name) is getattr(snapshot_package, name)


def test_an_unknown_name_of_the_snapshot_package_is_an_attribute_error() -> None:
    """A misspelt name fails as any missing attribute does."""
    with pytest.raises(AttributeError, match="no attribute 'SessionSnapshots'"):
        snapshot_package.SessionSnapshots  # type: ignore[attr-defined]  # noqa: B018


def test_the_plain_snapshot_text_escapes_as_the_model_does() -> None:
    """Quotes, backslashes and text beyond ASCII in the intention, an owner and a signed step."""
    machine = ClarificationMachine('Add "OAuth" login \\ für Ærø 🔐', default_flow(), owner="ada")
    machine.step({"auth_strategy": "OAuth"}, "user_passkey", principal="ada", proof=PROOF)
    assert machine.snapshot(seal=KEY).model_dump_json() == machine.snapshot_json(seal=KEY)


def test_the_snapshot_fields_are_listed_in_the_models_order() -> None:
    """``FIELDS``, which orders the plain text's keys, names the model's fields in its order."""
    assert tuple(SessionSnapshot.model_fields) == FIELDS
