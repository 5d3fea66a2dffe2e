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
    assert ["agent", "user_form", "cli"] == session.answered_by


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
    assert 3 == snapshot.schema_version


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
    """C9: the five values of the contract are the five a step takes."""
    assert ("user_form", "agent", "cli", "api", "unknown") == ANSWERED_BY


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
