"""Who supplied each step's answers (``answered_by``, C9): recorded, signed, replayed, migrated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preflight_fsm import (
    ClarificationMachine,
    FlowRegistry,
    InvalidAnswers,
    InvalidSeal,
    InvalidSnapshot,
    SealKeys,
    SessionSnapshot,
    default_flow,
)
from preflight_fsm.answered_by import ANSWERED_BY
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.snapshot import SCHEMA_VERSION
from preflight_fsm.snapshot import fast as snapshot_fast

OTHER = "Other (specify)"
V2 = Path(__file__).parent / "fixtures" / "snapshots" / "v2.jsonl"
REGISTRY = FlowRegistry(default_flow())
KEYS = SealKeys((b"k" * 32,))


def mixed() -> ClarificationMachine:
    """Three steps, each from another source: an agent, a form, the command line."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": OTHER}, answered_by="agent")
    machine.step({"change_category__other": "the database"}, answered_by="user_form")
    machine.step({"db_type": "MySQL"}, answered_by="cli")
    return machine


def as_dict(machine: ClarificationMachine, keys: SealKeys | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(machine.snapshot(seal=keys).model_dump_json())
    return data


def test_a_library_step_records_api_by_default() -> None:
    """C9: ClarificationMachine.step without answered_by records the step as 'api'."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"})
    assert ("api",) == machine.answered_by


def test_each_step_records_who_supplied_its_answers_in_order() -> None:
    """C9: answered_by holds one source per accepted step, in the order of the steps."""
    assert ("agent", "user_form", "cli") == mixed().answered_by


@pytest.mark.parametrize("source", ["person", "", None, ["cli"]], ids=repr)
def test_an_unknown_source_is_refused_and_records_nothing(source: Any) -> None:
    """C5: a step whose answered_by is not a known source is InvalidAnswers naming the field;
    the session is unchanged."""
    machine = ClarificationMachine("Improve the feedback form")
    before = machine.snapshot()
    with pytest.raises(InvalidAnswers) as info:
        machine.step({"change_category": "Database"}, answered_by=source)
    assert "answered_by" == info.value.feedback["issues"]["invalid"][0]["field"]
    assert before == machine.snapshot()


def test_a_refused_step_records_no_source() -> None:
    """C5: answers the engine refuses leave answered_by as it was."""
    machine = ClarificationMachine("Improve the feedback form")
    with pytest.raises(InvalidAnswers):
        machine.step({"nonsense": "x"}, answered_by="agent")
    assert () == machine.answered_by


def test_the_snapshot_carries_one_source_per_step() -> None:
    """C9: a snapshot holds answered_by beside steps, one entry for each."""
    snapshot = mixed().snapshot()
    assert (3, ("agent", "user_form", "cli")) == (len(snapshot.steps), snapshot.answered_by)


def test_restoring_replays_each_step_with_its_source() -> None:
    """C9: a restored session has the same sources, and its own snapshot equals the original."""
    original = mixed()
    restored = ClarificationMachine.from_snapshot(original.snapshot().model_dump_json())
    assert original.answered_by == restored.answered_by
    assert original.snapshot() == restored.snapshot()


def test_the_fast_restore_keeps_each_steps_source() -> None:
    """C9: the fast path restores the sources exactly as the full path does."""
    text = mixed().snapshot().model_dump_json()
    session = snapshot_fast.restored_json(text, REGISTRY, True, None)
    assert session is not None
    assert ("agent", "user_form", "cli") == session.answered_by


def test_an_edited_source_is_refused_by_the_digest() -> None:
    """C9: answered_by is an input the digest covers: 'agent' relabelled 'user_form' is refused."""
    data = as_dict(mixed())
    data["answered_by"][0] = "user_form"
    assert snapshot_fast.restored_json(json.dumps(data), REGISTRY, False, None) is None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "digest" == info.value.field


def test_an_edited_source_with_a_recomputed_digest_is_refused_by_the_seal() -> None:
    """C11: a forger who recomputes the digest still cannot reseal: InvalidSeal under the keys."""
    data = as_dict(mixed(), KEYS)
    data["answered_by"][0] = "user_form"
    data["digest"] = None
    data["digest"] = SessionSnapshot.model_validate(data).content_digest()
    with pytest.raises(InvalidSeal):
        ClarificationMachine.from_snapshot(data, keys=KEYS)


@pytest.mark.parametrize(
    ("sources", "field"),
    [(["agent", "cli"], "answered_by"), (["agent", "cli", "cli", "cli"], "answered_by")],
    ids=["too-few", "too-many"],
)
def test_a_source_list_that_does_not_match_the_steps_is_refused(
    sources: list[str], field: str
) -> None:
    """C9: answered_by needs exactly one entry per step; the refusal names it."""
    data = {**as_dict(mixed()), "answered_by": sources, "digest": None}
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert field == info.value.field


def test_a_source_that_is_not_a_known_value_is_refused() -> None:
    """C9: answered_by holds only the documented values; the refusal names the entry."""
    data = as_dict(mixed())
    data["answered_by"][1] = "the person, honestly"
    data["digest"] = None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "answered_by.1" == info.value.field


@pytest.mark.parametrize("line", V2.read_text(encoding="utf-8").splitlines(), ids=range(38))
def test_version_two_snapshots_restore_with_every_step_unknown(line: str) -> None:
    """C9: a snapshot written before answered_by existed restores, digest checked as written,
    each of its steps 'unknown'; the session saves as the current version and restores again."""
    old = json.loads(line)
    machine = ClarificationMachine.from_snapshot(line, require_digest=True)
    assert ("unknown",) * len(old["steps"]) == machine.answered_by
    assert (old["state"], old["answers"]) == (machine.state, machine.answers)
    again = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
    assert machine.snapshot() == again.snapshot()


def test_an_edited_version_two_snapshot_is_refused_as_written() -> None:
    """C9: the migration cannot launder an edit: a version-2 step changed is refused by its
    version-2 digest before it is migrated."""
    lines = V2.read_text(encoding="utf-8").splitlines()
    data = json.loads(next(line for line in lines if '"steps":[{"change_category"' in line))
    data["steps"][0]["change_category"] = "Frontend"
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "digest" == info.value.field


def test_a_version_two_snapshot_gains_the_sources_before_the_current_digest() -> None:
    """C9: after the migration the snapshot carries a digest of its own over the new inputs."""
    line = V2.read_text(encoding="utf-8").splitlines()[1]
    snapshot = ClarificationMachine.from_snapshot(line).snapshot()
    assert snapshot.digest == snapshot.content_digest()
    assert SCHEMA_VERSION == snapshot.schema_version


def test_a_minimal_snapshots_synthesised_steps_are_unknown() -> None:
    """C9: Preflights' four fields do not say who answered; the steps reaching them are unknown."""
    machine = ClarificationMachine.from_snapshot(
        {
            "intention": "Improve the feedback form",
            "asked_questions": ["change_category"],
            "answered_questions": ["change_category"],
            "missing_info": ["db_type"],
        }
    )
    assert ("unknown",) == machine.answered_by


def test_migrating_to_another_flow_keeps_each_steps_source() -> None:
    """C10: a session moved to another flow keeps who supplied each step."""
    from preflight_fsm.flow import flow_from_data

    target = flow_from_data({"name": "other"})
    migration = mixed().migrate(target, force=True)
    assert migration.machine is not None
    assert ("agent", "user_form", "cli") == migration.machine.answered_by


def test_every_documented_source_is_accepted() -> None:
    """C9: the seven values of the contract are the seven a step takes."""
    expected = ("user_form", "user_web", "user_passkey", "agent", "cli", "api", "unknown")
    assert expected == ANSWERED_BY


def test_each_recorded_answer_names_the_step_source_that_recorded_it() -> None:
    """C9: answer_sources gives, per recorded answer, who supplied the step that recorded it."""
    assert {
        "change_category": "agent",
        "change_category__other": "user_form",
        "db_type": "cli",
    } == mixed().answer_sources


def test_a_decided_value_chosen_as_other_is_decided_by_who_typed_the_text() -> None:
    """C6: the category came from 'Other (specify)' plus text: the text's source decided it."""
    assert (("Category", "user_form"), ("Type", "cli")) == mixed().decided_by


def test_a_category_the_intention_named_is_decided_by_the_intention() -> None:
    """C4: the keyword shortcut decided the category: its source is the intention."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth", "auth_library": "Auth.js"}, answered_by="agent")
    assert (("Category", "intention"), ("Strategy", "agent"), ("Library", "agent")) == (
        machine.decided_by
    )


def test_an_unfinished_session_has_no_decided_values() -> None:
    """C6: decided_by is empty until the session is Done."""
    assert () == ClarificationMachine("Improve the feedback form").decided_by


def test_a_custom_value_is_decided_by_whoever_sent_it() -> None:
    """C5: "Keycloak" for a choice records "Other (specify)" and its text; both are the
    sender's, and so is the decided Strategy."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "Keycloak"}, answered_by="user_form")
    assert {"auth_strategy": "user_form", "auth_strategy__other": "user_form"} == (
        machine.answer_sources
    )
    assert (("Category", "intention"), ("Strategy", "user_form")) == machine.decided_by


def test_a_custom_category_is_decided_by_whoever_sent_it() -> None:
    """C6: a category no keyword names ends in Other; its sender decided the category, and the
    Description taken from the intention is the intention's."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Billing"}, answered_by="agent")
    assert (("Category", "agent"), ("Description", "intention")) == machine.decided_by


PROOF = PasskeyProof(
    authenticator_data="YXV0aA",
    client_data_json="Y2xpZW50",
    credential_id="Y3JlZA",
    person="Ada Lovelace",
    signature="c2ln",
)


def signed() -> ClarificationMachine:
    """Started by alice; an agent's step as the token ci-bot, then a passkey-signed one."""
    machine = ClarificationMachine("Improve the feedback form", owner="alice")
    machine.step({"change_category": "Database"}, answered_by="agent", principal="ci-bot")
    machine.step({"db_type": "MySQL"}, answered_by="user_passkey", principal="alice", proof=PROOF)
    return machine


def test_each_step_records_its_principal_and_proof() -> None:
    """C9: principal and proof are recorded per step, None where none was given."""
    machine = signed()
    assert ("ci-bot", "alice") == machine.principals
    assert (None, PROOF) == machine.proofs
    assert "alice" == machine.owner


def test_a_library_step_records_no_principal_and_no_owner() -> None:
    """C9: unauthenticated by default."""
    machine = mixed()
    assert ((None,) * 3, (None,) * 3, None) == (machine.principals, machine.proofs, machine.owner)


def test_a_passkey_step_without_its_proof_is_refused() -> None:
    """C9: user_passkey means the step carries the assertion; without it, nothing is recorded."""
    machine = ClarificationMachine("Add OAuth login")
    with pytest.raises(InvalidAnswers) as info:
        machine.step({"auth_strategy": "OAuth"}, answered_by="user_passkey")
    assert "proof" == info.value.feedback["issues"]["invalid"][0]["field"]
    assert () == machine.answered_by


@pytest.mark.parametrize("source", ["user_web", "agent", "api"])
def test_a_proof_on_an_unsigned_step_is_refused(source: Any) -> None:
    """C9: only a user_passkey step carries a proof; a proof beside another source is refused."""
    machine = ClarificationMachine("Add OAuth login")
    with pytest.raises(InvalidAnswers) as info:
        machine.step({"auth_strategy": "OAuth"}, answered_by=source, proof=PROOF)
    assert "proof" == info.value.feedback["issues"]["invalid"][0]["field"]


def test_a_proof_that_is_not_a_passkey_proof_is_refused() -> None:
    """C9: a dict that looks like a proof is not one: the engine records only a PasskeyProof."""
    machine = ClarificationMachine("Add OAuth login")
    lookalike: Any = PROOF.model_dump()
    with pytest.raises(InvalidAnswers):
        machine.step({"auth_strategy": "OAuth"}, answered_by="user_passkey", proof=lookalike)


def test_an_unclean_principal_is_refused_and_records_nothing() -> None:
    """C5: a principal with a bidi override is refused naming the field; the session is as it
    was."""
    machine = ClarificationMachine("Add OAuth login")
    before = machine.snapshot()
    with pytest.raises(InvalidAnswers) as info:
        machine.step({"auth_strategy": "OAuth"}, principal="alice\u202e")
    assert "principal" == info.value.feedback["issues"]["invalid"][0]["field"]
    assert before == machine.snapshot()


def test_principals_and_owner_survive_a_round_trip_on_the_fast_path() -> None:
    """C9: restored by the fast path, a session with principals but no proof keeps them."""
    original = ClarificationMachine("Add OAuth login", owner="alice")
    original.step({"auth_strategy": "OAuth"}, "agent", principal="ci-bot")
    text = original.snapshot().model_dump_json()
    session = snapshot_fast.restored_json(text, REGISTRY, True, None)
    assert session is not None
    assert (("ci-bot",), (None,), "alice") == (session.principals, session.proofs, session.owner)


def test_a_snapshot_with_a_passkey_proof_takes_the_full_path() -> None:
    """Issue 32: the fast path never validates a proof (its model is pydantic's); the full path
    restores it, with the provenance as recorded."""
    original = signed()
    text = original.snapshot().model_dump_json()
    assert snapshot_fast.restored_json(text, REGISTRY, True, None) is None
    restored = ClarificationMachine.from_snapshot(text)
    assert (("ci-bot", "alice"), (None, PROOF), "alice") == (
        restored.principals,
        restored.proofs,
        restored.owner,
    )
    assert original.snapshot() == restored.snapshot()


@pytest.mark.parametrize(
    ("field", "edit"),
    [
        ("principals", lambda d: d["principals"].__setitem__(0, "alice")),
        ("proofs", lambda d: d["proofs"][1].__setitem__("person", "Grace Hopper")),
        ("proofs", lambda d: d["proofs"].reverse()),
        ("owner", lambda d: d.__setitem__("owner", "mallory")),
        ("owner", lambda d: d.__setitem__("owner", None)),
    ],
    ids=["principal", "person", "moved-proof", "owner", "owner-removed"],
)
def test_an_edited_provenance_is_refused_by_the_digest(field: str, edit: Any) -> None:
    """C9: principals, proofs and owner are inputs the digest covers: any edit is refused."""
    data = as_dict(signed())
    edit(data)
    assert snapshot_fast.restored_json(json.dumps(data), REGISTRY, False, None) is None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "digest" == info.value.field


def test_an_edited_principal_with_a_recomputed_digest_is_refused_by_the_seal() -> None:
    """C11: the seal covers the principals: a forger without the key cannot relabel a step."""
    data = as_dict(signed(), KEYS)
    data["principals"][0] = "alice"
    data["digest"] = None
    data["digest"] = SessionSnapshot.model_validate(data).content_digest()
    with pytest.raises(InvalidSeal):
        ClarificationMachine.from_snapshot(data, keys=KEYS)


def test_an_unclean_principal_in_a_snapshot_is_refused_naming_it() -> None:
    """C5: a snapshot written by hand with a bidi override in a principal restores on neither
    path, and the refusal names the entry."""
    data = as_dict(signed())
    data["principals"][0] = "ci\u202ebot"
    data["digest"] = None
    assert snapshot_fast.restored_json(json.dumps(data), REGISTRY, False, None) is None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "principals.0" == info.value.field


def test_migrating_to_another_flow_keeps_principals_proofs_and_owner() -> None:
    """C10: a session moved to another flow keeps each step's provenance and its owner."""
    from preflight_fsm.flow import flow_from_data

    migration = signed().migrate(flow_from_data({"name": "other"}), force=True)
    assert migration.machine is not None
    assert (("ci-bot", "alice"), (None, PROOF), "alice") == (
        migration.machine.principals,
        migration.machine.proofs,
        migration.machine.owner,
    )
