"""Older snapshot schema versions (snapshot/versions.py): checked as written, then migrated (C9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preflight_fsm import ClarificationMachine, InvalidSeal, InvalidSnapshot, SealKeys
from preflight_fsm.adapter import MockLLMAdapter
from preflight_fsm.snapshot import parse_snapshot
from preflight_fsm.snapshot.versions import MIGRATIONS, SIGNED_CONTENT

V1 = Path(__file__).parent / "fixtures" / "snapshots" / "v1.jsonl"
KEY = SealKeys((b"k" * 32,))


def v1_done_on(category: str) -> dict[str, Any]:
    """A version-1 snapshot (0.1.0) of a session that ended with a patch of ``category``."""
    for line in V1.read_text(encoding="utf-8").splitlines():
        data: dict[str, Any] = json.loads(line)
        if data["state"] == "Done" and data["category"] == category:
            return data
    raise AssertionError(f"no Done/{category} snapshot among the fixtures")


def with_answer(data: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    return {**data, "answers": {**data["answers"], key: value}}


def test_an_edited_version_one_snapshot_is_refused_by_its_digest() -> None:
    """Issue 23 item 1: answers edited under a version-1 digest restore no other patch."""
    forged = with_answer(v1_done_on("Database"), "db_type", "MongoDB")
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(json.dumps(forged))
    assert "digest" == info.value.field


def test_parsing_refuses_an_edited_version_one_snapshot() -> None:
    """What `diagram --snapshot` and the stores read goes through the same check."""
    forged = with_answer(v1_done_on("Database"), "db_type", "MongoDB")
    with pytest.raises(InvalidSnapshot) as info:
        parse_snapshot(forged)
    assert "digest" == info.value.field


def test_the_adapters_refuse_an_edited_version_one_snapshot_too() -> None:
    """The same forgery given to generate_questions is refused (turn 1), never restored."""
    forged = with_answer(v1_done_on("Database"), "db_type", "MongoDB")
    response = MockLLMAdapter().generate_questions("Improve the feedback form", None, forged)
    assert 0.0 == response.progress


def test_a_version_one_snapshot_as_written_restores_with_a_fresh_digest() -> None:
    """The migrated snapshot carries a digest over the current version's inputs."""
    parsed = parse_snapshot(json.dumps(v1_done_on("Database")), require_digest=True)
    assert parsed.content_digest() == parsed.digest


def test_under_a_key_an_unsealed_version_one_snapshot_is_refused() -> None:
    """C11: a seal key refuses old snapshots without a seal as it refuses new ones."""
    with pytest.raises(InvalidSeal):
        parse_snapshot(json.dumps(v1_done_on("Database")), keys=KEY)


def test_a_version_one_snapshot_sealed_as_written_is_resealed_when_migrated() -> None:
    """C11: a version-1 seal is checked over version 1's content, and the migrated snapshot is
    sealed under the first key."""
    data = v1_done_on("Database")
    data["seal"] = KEY.seal(SIGNED_CONTENT[1](data))
    parsed = parse_snapshot(json.dumps(data), keys=KEY)
    assert parsed.seal is not None


def test_every_migrated_version_names_the_content_its_digest_covers() -> None:
    """A version without SIGNED_CONTENT could not be checked before migrating."""
    assert sorted(MIGRATIONS) == sorted(SIGNED_CONTENT)


V2 = Path(__file__).parent / "fixtures" / "snapshots" / "v2.jsonl"
V3 = Path(__file__).parent / "fixtures" / "snapshots" / "v3.jsonl"


@pytest.mark.parametrize("line", V3.read_text(encoding="utf-8").splitlines(), ids=range(38))
def test_version_three_snapshots_restore_with_no_principal_proof_or_owner(line: str) -> None:
    """C9: a snapshot written before principals existed restores, digest checked as written,
    each step's source kept and its principal and proof None, the owner None."""
    old = json.loads(line)
    machine = ClarificationMachine.from_snapshot(line, require_digest=True)
    assert tuple(old["answered_by"]) == machine.answered_by
    steps = len(old["steps"])
    assert ((None,) * steps, (None,) * steps, None) == (
        machine.principals,
        machine.proofs,
        machine.owner,
    )
    again = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
    assert machine.snapshot() == again.snapshot()


def test_an_edited_version_three_snapshot_is_refused_as_written() -> None:
    """C9: a version-3 source relabelled is refused by its version-3 digest before migrating."""
    lines = V3.read_text(encoding="utf-8").splitlines()
    data = json.loads(next(line for line in lines if '"answered_by":["agent"' in line))
    data["answered_by"][0] = "user_form"
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "digest" == info.value.field


def test_a_version_three_seal_is_checked_over_version_three_content() -> None:
    """C11: a version-3 snapshot sealed as written restores under the key, resealed."""
    data = json.loads(V3.read_text(encoding="utf-8").splitlines()[1])
    data["seal"] = KEY.seal(SIGNED_CONTENT[3](data))
    assert parse_snapshot(json.dumps(data), keys=KEY).seal is not None


@pytest.mark.parametrize(
    ("fixture", "field", "value"),
    [
        (V3, "principals", ["alice"]),
        (V3, "proofs", [None]),
        (V3, "owner", "alice"),
        (V2, "answered_by", ["user_form"]),
    ],
    ids=["v3-principals", "v3-proofs", "v3-owner", "v2-answered_by"],
)
def test_a_field_added_to_an_older_snapshot_is_refused(
    fixture: Path, field: str, value: object
) -> None:
    """C9: the older digest does not cover a later version's field: one added by hand is
    refused, never migrated into a snapshot with a fresh digest of its own."""
    data = json.loads(fixture.read_text(encoding="utf-8").splitlines()[1])
    data[field] = value
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert field == info.value.field
