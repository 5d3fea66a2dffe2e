"""Snapshots (C9): exact round trips, minimal Preflights form, refusals that name the field."""

from __future__ import annotations

import hashlib
import inspect
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from journeys import JOURNEYS
from preflight_fsm import (
    ClarificationMachine,
    FlowRegistry,
    InvalidFlow,
    InvalidSeal,
    InvalidSnapshot,
    SealKeys,
    SessionSnapshot,
    SnapshotFlowMismatch,
    SnapshotVersionError,
    TraceStep,
    default_flow,
    load_registry,
)
from preflight_fsm import snapshot as snapshot_module
from preflight_fsm.flow import flow_from_data
from preflight_fsm.session import Session
from preflight_fsm.snapshot import fast as snapshot_fast
from preflight_fsm.snapshot import model as snapshot_model
from preflight_fsm.snapshot import versions as snapshot_versions
from preflight_fsm.snapshot import write as snapshot_write
from preflight_fsm.table import TABLE

OTHER = "Other (specify)"


def in_need_other() -> ClarificationMachine:
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": OTHER})
    return machine


def as_dict(machine: ClarificationMachine) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(machine.snapshot().model_dump_json())
    return data


def tampered(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The snapshot with ``changes`` and no digest, as a hand-edited snapshot would be."""
    return {**data, **changes, "digest": None}


def test_round_trip_through_json_restores_exactly() -> None:
    """C9: a restored machine has the same snapshot and steps exactly like the original."""
    original = in_need_other()
    restored = ClarificationMachine.from_snapshot(original.snapshot().model_dump_json())
    assert original.snapshot() == restored.snapshot()
    answers = {"change_category__other": "the postgres db"}
    assert original.step(answers) == restored.step(answers)
    assert original.snapshot() == restored.snapshot()


@pytest.mark.parametrize("form", ["model", "json-str", "json-bytes", "dict"])
def test_from_snapshot_accepts_every_documented_form(form: str) -> None:
    """C9: a SessionSnapshot, its JSON as str or bytes, or a dict."""
    snapshot = in_need_other().snapshot()
    given: Any = {
        "model": snapshot,
        "json-str": snapshot.model_dump_json(),
        "json-bytes": snapshot.model_dump_json().encode(),
        "dict": snapshot.model_dump(mode="json"),
    }[form]
    assert snapshot == ClarificationMachine.from_snapshot(given).snapshot()


def test_snapshot_lists_asked_and_answered_ids() -> None:
    """C9: asked_questions holds every id a turn returned; answered the recorded ones."""
    snapshot = in_need_other().snapshot()
    assert ("change_category", "change_category__other") == snapshot.asked_questions
    assert ("change_category",) == snapshot.answered_questions
    assert ("change_category",) == snapshot.missing_info
    assert "NeedOther" == snapshot.state


def test_the_trace_records_every_transition_with_its_guards() -> None:
    """C9: the trace holds (turn, trigger, source, dest, guards) of every transition."""
    machine = in_need_other()
    machine.step({"change_category__other": "database"})
    machine.step({"db_type": "MySQL"})
    assert [
        (1, "answer", "NeedCategory", "NeedOther"),
        (2, "answer", "NeedOther", "NeedPrimaryField"),
        (3, "answer", "NeedPrimaryField", "Done"),
    ] == [(t.turn, t.trigger, t.source, t.dest) for t in machine.snapshot().trace]


def test_an_edited_snapshot_is_refused_by_its_digest() -> None:
    """C9: changing any field of a digested snapshot is detected."""
    data = as_dict(in_need_other())
    data["intention"] = "Something else entirely"
    with pytest.raises(InvalidSnapshot, match="digest"):
        ClarificationMachine.from_snapshot(data)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"state": "Flying"}, "state"),
        ({"turn": "2"}, "turn"),
        ({"turn": 9}, "turn"),
        ({"state": "NeedCategory"}, "state"),
        ({"state": "Done"}, "state"),
        ({"other_for": "db_type"}, "other_for"),
        ({"category": "Database"}, "category"),
        ({"answers": {}}, "answers"),
        ({"answers": {"change_category": "Flying"}}, "answers"),
        ({"answers": {"change_category": OTHER, "nope": "x"}}, "answers"),
        ({"answers": {"change_category": OTHER, "change_category__other": "x"}}, "answers"),
        ({"missing_info": ["db_type"]}, "missing_info"),
        ({"answered_questions": []}, "answered_questions"),
        ({"asked_questions": ["change_category"]}, "asked_questions"),
        ({"trace": []}, "trace"),
        ({"intention": "   "}, "intention"),
        ({"flow": "payments"}, "flow"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_contradictions_are_refused_naming_the_field(changes: dict[str, Any], field: str) -> None:
    """C9: unknown keys, bad types and fields the inputs do not produce name the field."""
    data = tampered(as_dict(in_need_other()), **changes)
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert field == info.value.field


def test_a_trace_the_inputs_do_not_take_is_refused() -> None:
    """C9: the trace must be the one replaying the inputs takes, guard for guard."""
    data = as_dict(in_need_other())
    data["trace"][0]["guards"] = ["pending_question_answered"]
    with pytest.raises(InvalidSnapshot, match="inputs give") as info:
        ClarificationMachine.from_snapshot(tampered(data))
    assert "trace" == info.value.field


@pytest.mark.parametrize("version", [0, snapshot_module.SCHEMA_VERSION + 1, "1", None])
def test_unknown_schema_versions_are_refused(version: Any) -> None:
    """C9: a schema_version this release cannot read or migrate raises SnapshotVersionError."""
    data = tampered(as_dict(in_need_other()), schema_version=version)
    with pytest.raises(SnapshotVersionError) as info:
        ClarificationMachine.from_snapshot(data)
    assert "schema_version" == info.value.field


def test_a_missing_schema_version_means_the_current_one() -> None:
    """C9: no schema_version -> the current one."""
    data = as_dict(in_need_other())
    del data["schema_version"]
    data["digest"] = None
    assert "NeedOther" == ClarificationMachine.from_snapshot(data).state


@pytest.fixture
def version_four(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the format moved to version 4, which renamed ``other_for`` to ``awaiting``."""

    def upgrade(data: dict[str, Any], flows: object) -> dict[str, Any]:
        data["awaiting"] = data.pop("other_for", None)
        return data

    monkeypatch.setattr(snapshot_versions, "SCHEMA_VERSION", 4)
    monkeypatch.setitem(snapshot_versions.MIGRATIONS, 3, upgrade)
    monkeypatch.setitem(snapshot_versions.SIGNED_CONTENT, 3, snapshot_model.canonical)


def test_migrations_run_in_order_before_validation(version_four: None) -> None:
    """C9: older versions go through the MIGRATIONS registry before validation."""
    data = tampered(as_dict(in_need_other()), schema_version=3)
    with pytest.raises(InvalidSnapshot) as info:
        snapshot_module.parse_snapshot(data)
    # The migrated dict reached validation: the current model knows no `awaiting` key.
    assert "awaiting" == info.value.field


def test_a_snapshot_of_another_flow_is_refused() -> None:
    """C9: another flow's fingerprint raises SnapshotFlowMismatch."""
    custom = flow_from_data({"name": "custom"})
    machine = ClarificationMachine("Improve the feedback form", custom)
    with pytest.raises(SnapshotFlowMismatch):
        ClarificationMachine.from_snapshot(machine.snapshot())


@pytest.mark.parametrize(
    "raw",
    ["not json", "[1, 2]", b"\xff\xfe", "{" * 5000, "x" * 300_000, "\udcff", '{"a": "\udcff"}'],
    ids=["text", "array", "bad-bytes", "deep", "huge", "lone-surrogate", "surrogate-in-object"],
)
def test_malformed_json_is_an_invalid_snapshot(raw: str | bytes) -> None:
    """C9: pydantic's and json's own errors never leak out of from_snapshot."""
    with pytest.raises(InvalidSnapshot):
        ClarificationMachine.from_snapshot(raw)


# -- Preflights' minimal four-field form ---------------------------------------------------------


def minimal(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "intention": "Improve the feedback form",
        "asked_questions": [],
        "answered_questions": [],
        "missing_info": [],
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "state", "turn", "missing"),
    [
        (
            {"asked_questions": ["change_category"], "missing_info": ["change_category"]},
            "NeedCategory",
            1,
            ("change_category",),
        ),
        (
            {
                "asked_questions": ["change_category", "change_category__other"],
                "answered_questions": ["change_category"],
                "missing_info": ["change_category"],
            },
            "NeedOther",
            2,
            ("change_category",),
        ),
        (
            {
                "asked_questions": ["change_category", "db_type"],
                "answered_questions": ["change_category"],
                "missing_info": ["db_type"],
            },
            "NeedPrimaryField",
            2,
            ("db_type",),
        ),
        (
            {
                "asked_questions": ["auth_strategy", "auth_strategy__other"],
                "answered_questions": ["auth_strategy"],
                "missing_info": ["auth_strategy"],
            },
            "NeedOther",
            3,
            ("auth_strategy",),
        ),
    ],
    ids=["category", "other-category", "field", "other-field"],
)
def test_a_minimal_snapshot_restores_to_a_position(
    fields: dict[str, Any], state: str, turn: int, missing: tuple[str, ...]
) -> None:
    """C9: the position missing_info names, reached by synthesised inputs (D39)."""
    machine = ClarificationMachine.from_snapshot(minimal(**fields))
    assert (state, turn, missing) == (
        machine.state,
        machine.turn.number,
        machine.turn.missing_info,
    )


def test_a_minimal_snapshot_steps_on() -> None:
    """C9: a restored position takes the next answers like a live session."""
    machine = ClarificationMachine.from_snapshot(
        minimal(asked_questions=["db_type", "db_type__other"], missing_info=["db_type"])
    )
    turn = machine.step({"db_type": "MongoDB"})
    assert turn.patch is not None
    assert ("Database", (("Type", "MongoDB"),)) == (turn.patch.category, turn.patch.fields)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"missing_info": []}, "missing_info"),
        ({"missing_info": ["colour"]}, "missing_info"),
        ({"missing_info": ["db_type", "auth_strategy"]}, "missing_info"),
        ({"missing_info": ["db_type__other"]}, "missing_info"),
        ({"missing_info": ["db_type"], "asked_questions": ["nope"]}, "asked_questions"),
        ({"missing_info": ["db_type"], "category": "Database"}, "category"),
    ],
    ids=["empty", "unknown-key", "two-keys", "other-key", "unknown-asked", "partial-full"],
)
def test_minimal_snapshots_that_cannot_restore_are_refused(
    fields: dict[str, Any], field: str
) -> None:
    """C9: an empty missing_info cannot restore as a machine; odd keys are named."""
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(minimal(**fields))
    assert field == info.value.field


def test_snapshot_model_is_frozen_and_refuses_unknown_keys() -> None:
    """C9: SessionSnapshot is a frozen pydantic model with extra keys forbidden."""
    snapshot = in_need_other().snapshot()
    with pytest.raises(ValueError, match="frozen"):
        snapshot.state = "Done"  # type: ignore[misc]
    assert "forbid" == SessionSnapshot.model_config.get("extra")


def test_require_digest_refuses_a_snapshot_without_one() -> None:
    """C9: stores restore with require_digest=True, so a rewritten row without digest is refused."""
    data = tampered(as_dict(in_need_other()))
    assert "NeedOther" == ClarificationMachine.from_snapshot(data).state
    with pytest.raises(InvalidSnapshot, match="missing") as info:
        ClarificationMachine.from_snapshot(data, require_digest=True)
    assert "digest" == info.value.field


# -- replay (C9): a session is its inputs ---------------------------------------------------------

V1 = Path(__file__).parent / "fixtures" / "snapshots" / "v1.jsonl"


def resealed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its digest recomputed, as a forger who read the code would."""
    data = {**data, "digest": None}
    snapshot = SessionSnapshot.model_validate(data)
    return {**data, "digest": snapshot.content_digest()}


def at_turn_three() -> ClarificationMachine:
    machine = ClarificationMachine("Add a new feature")
    machine.step({"change_category": OTHER})
    machine.step({"change_category__other": "database"})
    return machine


def test_a_turn_rewound_with_its_digest_recomputed_is_refused() -> None:
    """C9: the issue's forgery: turn 3 set back to 2 (budget beaten) restores nothing."""
    data = resealed({**as_dict(at_turn_three()), "turn": 2})
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert ("turn", "is 2, but the session's inputs give 3") == (
        info.value.field,
        info.value.problem,
    )


def test_a_relabelled_category_with_its_digest_recomputed_is_refused() -> None:
    """C9: a Done/Infra snapshot relabelled Database does not yield a Database patch."""
    machine = ClarificationMachine("Deploy the API")
    machine.step({"change_category": "Infra"})
    machine.step({"infra_hosting": "Serverless"})
    data = resealed({**as_dict(machine), "category": "Database"})
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "category" == info.value.field


def test_inputs_the_flow_refuses_are_named_by_step() -> None:
    """C9: an edited input is replayed like any answer: refused, naming the step."""
    data = as_dict(at_turn_three())
    data["steps"][1] = {"change_category__other": "x" * 600}
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(resealed(data))
    assert "steps.1" == info.value.field


def test_model_validate_takes_json_loads_output() -> None:
    """C9: SessionSnapshot.model_validate accepts exactly what json.loads of its JSON gives."""
    snapshot = at_turn_three().snapshot()
    assert snapshot == SessionSnapshot.model_validate(json.loads(snapshot.model_dump_json()))


@pytest.mark.parametrize(
    "line",
    V1.read_text(encoding="utf-8").splitlines(),
    ids=lambda line: str(zlib.crc32(line.encode()) % 10**6),
)
def test_version_one_snapshots_restore_through_the_migration_registry(line: str) -> None:
    """C9: snapshots the 0.1.0 release wrote restore at their position and save again."""
    old = json.loads(line)
    machine = ClarificationMachine.from_snapshot(line)
    assert (old["state"], old["turn"], old["answers"]) == (
        machine.state,
        machine.turn.number,
        machine.answers,
    )
    assert (
        machine.snapshot()
        == ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json()).snapshot()
    )


MINIMAL_POSITIONS = [
    {"asked_questions": ["change_category"], "missing_info": ["change_category"]},
    {"answered_questions": ["change_category"], "missing_info": ["change_category"]},
    {"answered_questions": ["change_category"], "missing_info": ["db_type"]},
    {"answered_questions": ["change_category", "db_type"], "missing_info": ["db_type"]},
]


@pytest.mark.parametrize("fields", MINIMAL_POSITIONS, ids=["category", "other", "field", "text"])
def test_a_restored_minimal_snapshot_saves_and_restores_after_every_step(
    fields: dict[str, Any],
) -> None:
    """C9: a session restored from Preflights' form is ordinary: its own snapshots restore."""
    machine = ClarificationMachine.from_snapshot(minimal(**fields))
    for answers in ({"change_category": "Database"}, {"db_type": OTHER}, {"db_type__other": "x"}):
        again = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
        assert machine.snapshot() == again.snapshot()
        if machine.finished:
            break
        pending = machine.turn.questions[0].id
        relevant = {k: v for k, v in answers.items() if k == pending}
        if relevant:
            machine.step(relevant)


def test_a_minimal_position_the_intention_contradicts_is_refused() -> None:
    """D39: an intention that names a category never asks change_category."""
    with pytest.raises(InvalidSnapshot, match="already names the category 'Authentication'"):
        ClarificationMachine.from_snapshot(
            minimal(intention="Add OAuth login", missing_info=["change_category"])
        )


# -- seals (C11) ----------------------------------------------------------------------------------

KEY = SealKeys((b"k" * 32,))
OLD_KEY = SealKeys((b"o" * 32,))


def test_a_sealed_snapshot_restores_under_its_key() -> None:
    """C11: sealed with the key, accepted with the key; the seal is HMAC-SHA256 hex."""
    snapshot = at_turn_three().snapshot(seal=KEY)
    assert snapshot.seal is not None
    assert 64 == len(snapshot.seal)
    restored = ClarificationMachine.from_snapshot(snapshot.model_dump_json(), keys=KEY)
    assert "NeedPrimaryField" == restored.state


@pytest.mark.parametrize(
    ("seal_with", "problem"),
    [(None, "is missing"), (OLD_KEY, "does not match")],
    ids=["unsealed", "other-key"],
)
def test_with_a_key_unsealed_or_wrongly_sealed_snapshots_are_refused(
    seal_with: SealKeys | None, problem: str
) -> None:
    """C11: InvalidSeal, its own error, names the seal."""
    snapshot = at_turn_three().snapshot(seal=seal_with)
    with pytest.raises(InvalidSeal, match=problem) as info:
        ClarificationMachine.from_snapshot(snapshot, keys=KEY)
    assert "seal" == info.value.field


def test_a_seal_covers_every_field() -> None:
    """C11: editing any field (and recomputing the digest) breaks the seal."""
    data = as_dict(at_turn_three())
    data = resealed({**data, "intention": "Add a new feature now"})
    data["seal"] = at_turn_three().snapshot(seal=KEY).seal
    with pytest.raises(InvalidSeal):
        ClarificationMachine.from_snapshot(data, keys=KEY)


def test_rotation_seals_with_the_first_key_and_accepts_any() -> None:
    """C11: new key first, old one kept: old snapshots restore, new ones get the new seal."""
    rotated = SealKeys((b"k" * 32, b"o" * 32))
    old = at_turn_three().snapshot(seal=OLD_KEY)
    assert "NeedPrimaryField" == ClarificationMachine.from_snapshot(old, keys=rotated).state
    assert at_turn_three().snapshot(seal=rotated).seal == at_turn_three().snapshot(seal=KEY).seal


def test_keys_come_from_a_file_or_the_environment(tmp_path: Path) -> None:
    """C11: the CLI and servers read a key file, or PREFLIGHT_FSM_SEAL_KEYS, comma-separated."""
    key_file = tmp_path / "seal.keys"
    key_file.write_text("# newest first\n" + "k" * 32 + "\n" + "o" * 32 + "\n")
    from_file = SealKeys.from_environment(key_file)
    from_env = SealKeys.from_environment(env={"PREFLIGHT_FSM_SEAL_KEYS": "k" * 32 + "," + "o" * 32})
    assert from_file == from_env == SealKeys((b"k" * 32, b"o" * 32))
    assert SealKeys.from_environment(env={}) is None


def test_short_keys_are_refused_and_keys_never_print() -> None:
    """C11: a key under 32 bytes is refused; repr shows no key material."""
    with pytest.raises(ValueError, match="shorter than 32 bytes"):
        SealKeys((b"short",))
    assert "k" * 32 not in repr(KEY)


# -- flow versions (C10) --------------------------------------------------------------------------

# Reworded, and shorter answers: a flow another replay depends on (D261).
CHANGED = flow_from_data(
    {
        "name": "default",
        "category_question": {"text": "What kind of change?"},
        "limits": {"max_answer_chars": 400},
    }
)


def test_a_session_finishes_on_the_registered_flow_it_started_on() -> None:
    """C10: after the flow changed, a registered earlier version still steps its sessions."""
    saved = ClarificationMachine("Improve the feedback form").snapshot()
    registry = FlowRegistry(CHANGED, [default_flow()])
    restored = ClarificationMachine.from_snapshot(saved, registry)
    assert default_flow() == restored.flow
    assert "Done" == restored.step({"change_category": "Billing"}).state


def test_an_unregistered_flow_is_named_with_the_registered_ones() -> None:
    """C10: not corruption: the fingerprint and what is registered are named."""
    saved = ClarificationMachine("Improve the feedback form").snapshot()
    with pytest.raises(SnapshotFlowMismatch) as info:
        ClarificationMachine.from_snapshot(saved, FlowRegistry(CHANGED))
    assert default_flow().fingerprint in str(info.value)
    assert f"default@{CHANGED.fingerprint} (current)" in str(info.value)


def test_earlier_flow_files_are_kept_beside_the_current_one(tmp_path: Path) -> None:
    """C10: team.toml is current; team.versions/*.toml are the earlier ones."""
    (tmp_path / "team.toml").write_text('name = "team"\n')
    (tmp_path / "team.versions").mkdir()
    (tmp_path / "team.versions" / "2026-10.toml").write_text(
        'name = "team"\n[category_question]\ntext = "Old wording?"\n'
    )
    registry = load_registry(tmp_path / "team.toml")
    assert 2 == len(registry)
    assert "What type of change is this?" == registry.current.category_question.text


def test_migrating_to_an_equivalent_flow_replays_the_session() -> None:
    """C10: a wording change moves the session; the new flow asks in its words."""
    machine = ClarificationMachine("Improve the feedback form")
    result = machine.migrate(CHANGED)
    assert result.migrated
    assert result.divergence is None
    assert result.machine is not None
    assert "What kind of change?" == result.machine.turn.questions[0].question


def test_a_diverging_session_stays_unless_forced() -> None:
    """C10: the first step whose outcome differs is reported; force migrates all the same."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Database"})
    fewer = flow_from_data(
        {"categories": [c.model_dump() for c in default_flow().categories if c.name != "Database"]}
    )
    result = machine.migrate(fewer)
    assert not result.migrated
    assert result.divergence is not None
    assert (1, "state") == (result.divergence.step, result.divergence.field)
    assert machine.migrate(fewer, force=True).migrated


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "é à ü ß",
        "日本語のテキスト",
        "emoji 👩\u200d💻",
        'quote " backslash \\ slash /',
        "tab\tand\nnewline",
    ],
    ids=["ascii", "latin", "cjk", "emoji", "escapes", "whitespace"],
)
def test_the_canonical_form_is_sorted_compact_json(text: str) -> None:
    """C9/C11, D48: digest and seal cover json.dumps(sort_keys, compact, UTF-8) of the inputs."""
    machine = ClarificationMachine(f"Refactor {text}")
    machine.step({"change_category": "Database", "db_orm": text[:40]})
    snapshot = machine.snapshot()
    content = snapshot.model_dump(mode="json", include=set(snapshot_model.SIGNED_FIELDS))
    expected = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert expected.encode() == snapshot_module.canonical_content(snapshot)


def test_signed_json_takes_the_signed_fields_in_their_sorted_order() -> None:
    """D302: the fast restore passes the signed fields to signed_json by position, so its
    parameters are SIGNED_FIELDS, in that order (a field added to one and not the other fails
    here)."""
    parameters = tuple(inspect.signature(snapshot_model.signed_json).parameters)
    assert snapshot_model.SIGNED_FIELDS == parameters


@pytest.mark.parametrize(
    ("field", "value"),
    [("state", "Done"), ("category", "Frontend"), ("turn", 1), ("answers", {})],
    ids=str,
)
def test_a_sealed_snapshot_whose_derived_fields_were_edited_is_refused(
    field: str, value: Any
) -> None:
    """D48: the seal covers the inputs; an edit of what they derive fails the replay instead."""
    data = json.loads(at_turn_three().snapshot(seal=KEY).model_dump_json())
    data[field] = value
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data, keys=KEY)
    assert field == info.value.field


# -- restoring from the parsed JSON (the fast path, docs/performance.md) ---------------------------

REGISTRY = FlowRegistry(default_flow())


def full_path(text: str | bytes, **options: Any) -> Session:
    """What parse_snapshot then restore make of ``text``: the path that names every refusal."""
    parsed = snapshot_module.parse_snapshot(text, REGISTRY, **options)
    return snapshot_module.replay_snapshot(parsed, REGISTRY)


def positions() -> list[tuple[str, ClarificationMachine]]:
    """Every journey through the table, at every position it passes."""
    found = []
    for name, (intention, steps) in JOURNEYS.items():
        machine = ClarificationMachine(intention)
        found.append((f"{name}@0", machine))
        for k, answers in enumerate(steps, start=1):
            machine = ClarificationMachine.from_snapshot(machine.snapshot())
            machine.step(answers)
            found.append((f"{name}@{k}", machine))
    return found


POSITIONS = positions()


@pytest.mark.parametrize("sealed", [False, True], ids=["digest", "sealed"])
@pytest.mark.parametrize("machine", [m for _, m in POSITIONS], ids=[name for name, _ in POSITIONS])
def test_every_snapshot_written_here_restores_from_its_parsed_json(
    machine: ClarificationMachine, sealed: bool
) -> None:
    """A snapshot's own JSON takes the fast path, into the session the full path restores."""
    keys = KEY if sealed else None
    text = machine.snapshot(seal=keys).model_dump_json()
    fast = snapshot_fast.restored_json(text, REGISTRY, True, keys)
    assert fast is not None
    full = full_path(text, require_digest=True, keys=keys)
    assert snapshot_module.snapshot_of(full) == snapshot_module.snapshot_of(fast)


def edited(text: str, edit: Callable[[dict[str, Any]], object]) -> str:
    data = json.loads(text)
    edit(data)
    return json.dumps(data)


def reordered_answers(data: dict[str, Any]) -> None:
    data["answered_questions"].reverse()


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.pop("seal"),
        lambda d: d.pop("schema_version"),
        lambda d: d.pop("other_for"),
        reordered_answers,
    ],
    ids=["seal-left-out", "schema-version-left-out", "null-left-out", "answers-reordered"],
)
def test_what_the_fast_path_does_not_take_restores_by_the_full_path(
    edit: Callable[[dict[str, Any]], object],
) -> None:
    """Defaults left out and answered_questions in another order (D37) are accepted as before."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Database", "db_type": "MySQL"})
    text = edited(machine.snapshot().model_dump_json(), edit)
    assert snapshot_fast.restored_json(text, REGISTRY, False, None) is None
    assert machine.snapshot() == ClarificationMachine.from_snapshot(text).snapshot()


def set_first_trace_turn(value: object) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["trace"][0]["turn"] = value

    return edit


def drop_guards(data: dict[str, Any]) -> None:
    del data["trace"][0]["guards"]


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d.update(turn=True), "turn"),
        (lambda d: d.update(turn=2.0), "turn"),
        (set_first_trace_turn(True), "trace.0.turn"),
        (set_first_trace_turn(1.0), "trace.0.turn"),
        (drop_guards, "trace"),
        (lambda d: d.update(schema_version=True), "schema_version"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d.update(asked_questions=("change_category",)), "asked_questions"),
        (lambda d: d.update(answers=None), "answers"),
        (lambda d: d.update(flow_fingerprint="0" * 16, digest=None), "flow_fingerprint"),
        (lambda d: d.update(digest="0" * 64), "digest"),
        (lambda d: d.update(steps=[{"change_category": ["Database"]}]), "steps.0.change_category"),
    ],
    ids=[
        "turn-true",
        "turn-float",
        "trace-turn-true",
        "trace-turn-float",
        "guards-dropped",
        "version-true",
        "unknown-key",
        "asked-shortened",
        "answers-null",
        "unregistered-flow",
        "wrong-digest",
        "step-value-a-list",
    ],
)
def test_what_the_full_path_refuses_the_fast_path_refuses(
    edit: Callable[[dict[str, Any]], object], field: str
) -> None:
    """JSON's true and 1.0 are no integers, nothing left out or added slips through, and the
    refusal names the field as before."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Database"})
    text = edited(machine.snapshot().model_dump_json(), edit)
    assert snapshot_fast.restored_json(text, REGISTRY, False, None) is None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(text)
    assert field == info.value.field


def test_ids_longer_than_a_snapshot_holds_are_refused_when_the_flow_loads() -> None:
    """A flow may not name a question with more characters than a snapshot holds (200): such a
    session could never be snapshotted, so the flow is refused when it loads (issue 23 item 11)."""
    with pytest.raises(InvalidFlow) as info:
        flow_from_data({"category_question": {"id": "c" * 201}})
    assert "200" in str(info.value)


def test_ids_longer_than_a_snapshot_holds_are_refused_on_both_paths() -> None:
    """A flow naming a question with more characters than a snapshot holds (200), built past
    the flow's own check (which refuses it at load, tests/test_flow.py): a snapshot written for
    its session by hand restores on neither path."""
    default = flow_from_data({})
    long_id = default.category_question.model_copy(update={"id": "c" * 201})
    flow = default.model_copy(update={"category_question": long_id})
    registry = FlowRegistry(flow)
    session = ClarificationMachine("Improve the feedback form", flow)._session
    content = snapshot_write.derived_fields(session)
    content.update(
        intention=session.intention,
        schema_version=snapshot_module.SCHEMA_VERSION,
        flow_fingerprint=flow.fingerprint,
        steps=session.steps,
        answered_by=session.answered_by,
        principals=session.principals,
        proofs=session.proofs,
        owner=session.owner,
    )
    content["digest"] = hashlib.sha256(snapshot_model.canonical(content)).hexdigest()
    content["seal"] = None
    text = json.dumps(content)
    assert snapshot_fast.restored_json(text, registry, False, None) is None
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(text, registry)
    assert "asked_questions.0" == info.value.field


def test_every_trace_step_the_table_writes_fits_a_snapshot() -> None:
    """The fast path leaves the trace's guards unchecked: the table's rows fit TraceStep."""
    for row in TABLE:
        TraceStep(
            turn=0,
            trigger=row["trigger"],
            source=row["source"],
            dest=row["dest"],
            guards=tuple(row["conditions"]),
        )


def test_the_fast_path_compares_every_field_of_the_snapshot() -> None:
    """What a replay derives and what it does not (inputs, digest, seal) are every field: a
    field added to the snapshot is compared, or the fast path never accepts."""
    machine = ClarificationMachine("Improve the feedback form")
    derived = snapshot_write.derived_fields(machine._session)
    assert sorted(SessionSnapshot.model_fields) == sorted([*derived, *snapshot_fast._UNDERIVED])


@pytest.mark.parametrize("seal", [None, "0" * 64], ids=["unsealed", "wrongly-sealed"])
def test_with_a_key_the_fast_path_takes_only_a_snapshot_sealed_under_it(seal: str | None) -> None:
    """C11: the seal is checked on the fast path too; the refusal is InvalidSeal, as before."""
    data = json.loads(at_turn_three().snapshot(seal=KEY).model_dump_json())
    text = json.dumps({**data, "seal": seal})
    assert snapshot_fast.restored_json(text, REGISTRY, False, KEY) is None
    with pytest.raises(InvalidSeal):
        ClarificationMachine.from_snapshot(text, keys=KEY)
