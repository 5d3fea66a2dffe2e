"""Hypothesis properties: determinism, snapshot round trips, C3/C7 invariants, hostile input."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import (
    ClarificationMachine,
    FlowRegistry,
    InvalidAnswers,
    InvalidIntention,
    InvalidSnapshot,
    SealKeys,
    SessionFinished,
    SessionSnapshot,
    Turn,
    default_flow,
)
from preflight_fsm import snapshot as snapshot_module
from preflight_fsm.answered_by import ANSWERED_BY
from preflight_fsm.flow import OTHER_SUFFIX
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.session import Session
from preflight_fsm.snapshot import fast as snapshot_fast
from preflight_fsm.snapshot import json_form

FLOW = default_flow()
OTHER = FLOW.other_option
PLACEHOLDERS = list(FLOW.placeholders)
KNOWN_IDS = sorted(
    {FLOW.category_question.id, f"{FLOW.category_question.id}{OTHER_SUFFIX}", "description"}
    | {c.question.id for c in FLOW.categories}
    | {f"{c.question.id}{OTHER_SUFFIX}" for c in FLOW.categories}
    | {s.id for c in FLOW.categories for s in c.secondary}
)
WORDS = [
    "auth", "login", "db", "postgres", "ui", "react", "api", "endpoint", "deploy", "docker",
    "author", "feedback", "build", "social", "add", "the", "fix", "billing", "front", "end",
]  # fmt: skip
OPTIONS = [o for c in FLOW.categories for o in c.question.options] + [
    c.name for c in FLOW.categories
]

PROOF = PasskeyProof(
    authenticator_data="YXV0aA", client_data_json="Y2xpZW50", credential_id="Y3JlZA",
    person="Ada Lovelace", signature="c2ln",
)  # fmt: skip
PROVENANCE: list[tuple[Any, str | None, PasskeyProof | None]] = [
    (source, "alice" if i % 2 else None, PROOF if source == "user_passkey" else None)
    for i, source in enumerate(ANSWERED_BY)
]
"""Each source, every other one with a principal, the signed one with its proof: what advanced
steps cycle through."""

intentions = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.text(min_size=1, max_size=60).filter(lambda t: t.strip() != ""),
)
plain_values = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from([OTHER, "other", "none", "SAML", "the database", "front end stuff"]),
    st.sampled_from([*PLACEHOLDERS, "", "  "]),
    st.text(max_size=30),
)
values = st.one_of(
    plain_values,
    st.none(),
    st.lists(plain_values, max_size=3),
    st.integers(),
    st.text(min_size=495, max_size=510),
)
answer_dicts = st.dictionaries(
    st.one_of(st.sampled_from(KNOWN_IDS), st.text(max_size=12)), values, max_size=6
)
# Answers that mostly make progress: the pending key plus some volunteered ones.
well_formed = st.dictionaries(st.sampled_from(KNOWN_IDS), plain_values, max_size=4)


def pending_key(machine: ClarificationMachine) -> str | None:
    questions = machine.turn.questions
    return questions[0].id if questions else None


def play(intention: str, steps: list[dict[str, Any]]) -> list[Turn | str]:
    """Run a session; each step's result is its Turn or the name of the error it raised."""
    try:
        machine = ClarificationMachine(intention)
    except InvalidIntention:
        return ["InvalidIntention"]
    results: list[Turn | str] = [machine.turn]
    for answers in steps:
        key = pending_key(machine)
        if key is not None and key not in answers:
            answers = {**answers, key: answers.get(key, OPTIONS[len(answers) % len(OPTIONS)])}
        try:
            results.append(machine.step(answers))
        except (InvalidAnswers, SessionFinished) as exc:
            results.append(type(exc).__name__)
    return results


def advanced(intention: str, steps: list[dict[str, Any]]) -> ClarificationMachine | None:
    """A session stepped until its answers run out or one is refused; None for a bad intention."""
    try:
        machine = ClarificationMachine(intention)
    except InvalidIntention:
        return None
    for i, answers in enumerate(steps):
        source, principal, proof = PROVENANCE[i % len(PROVENANCE)]
        try:
            machine.step(answers, answered_by=source, principal=principal, proof=proof)
        except (InvalidAnswers, SessionFinished):
            break
    return machine


@contextlib.contextmanager
def standard_json(on: bool = True) -> Iterator[None]:
    """Within it (when ``on``), ``snapshot/json_form.py`` reads and writes JSON with the standard
    library, as in a command that never imported pydantic-core (issue 32)."""
    with pytest.MonkeyPatch.context() as patch:
        if on:  # pydantic-core not found: what _core answers in a process without it
            patch.setattr(json_form, "_core", lambda name: None)
            patch.setattr(json_form, "_to_json", None)
            patch.setattr(json_form, "_from_json", None)
        yield


def assert_invariants(turn: Turn) -> None:
    visible = [q for q in turn.questions if not q.optional]
    assert len(turn.questions) <= 2, "C3: never more than 2 questions"
    assert len(visible) <= 1, "C3: never 2 field questions"
    assert turn.number <= FLOW.limits.max_turns, "C3: at most 3 question turns"
    assert all(OTHER_SUFFIX not in key for key in turn.missing_info), "C7: no __other keys"
    assert (turn.missing_info == ()) == (turn.progress == 1.0) == (turn.state == "Done"), "C7"
    assert turn.progress in (0.0, 0.5, 1.0)
    assert turn.decision_hint in ("task", "adr", "unsure")
    assert (turn.patch is not None) == (turn.state == "Done"), "a patch exactly in Done"
    if turn.state in ("Done", "NoPatch"):
        assert () == turn.questions
    else:
        assert 1 == len(turn.missing_info), "C7: one blocking key per question turn"
        assert turn.questions, "a question state asks something"
    if turn.patch is not None:
        for name, value in turn.patch.fields:
            assert value.strip() == value != "", f"C6: {name} is empty or unstripped"
            assert value.casefold() not in PLACEHOLDERS, f"C6: {name} holds a placeholder"


@given(intentions, st.lists(well_formed, max_size=4))
def test_same_inputs_give_the_same_outputs(intention: str, steps: list[dict[str, Any]]) -> None:
    """Spec §2.1: the same intention and answers always give the same turns."""
    assert play(intention, steps) == play(intention, steps)


@given(intentions, st.lists(well_formed, max_size=4))
def test_every_turn_keeps_the_c3_and_c7_invariants(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C3/C7: question budget, lock, missing_info/progress agreement, clean patches."""
    for result in play(intention, steps):
        if isinstance(result, Turn):
            assert_invariants(result)


@given(intentions, st.lists(well_formed, min_size=1, max_size=4))
def test_a_restored_machine_steps_exactly_like_the_original(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C9: at every turn, snapshot -> JSON -> restore gives a machine that steps identically."""
    try:
        machine = ClarificationMachine(intention)
    except InvalidIntention:
        return
    for answers in steps:
        if machine.finished:
            break
        restored = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
        assert machine.snapshot() == restored.snapshot()
        outcomes: list[Turn | dict[str, Any]] = []
        for m in (machine, restored):
            try:
                outcomes.append(m.step(answers))
            except InvalidAnswers as exc:
                outcomes.append(exc.feedback)
        assert outcomes[0] == outcomes[1]
        assert machine.snapshot() == restored.snapshot()


@given(intentions, st.lists(answer_dicts, max_size=4))
def test_random_answers_raise_only_documented_errors(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C5: any answers give a turn or InvalidAnswers/SessionFinished, never a bad patch."""
    try:
        machine = ClarificationMachine(intention)
    except InvalidIntention:
        return
    for answers in steps:
        before = machine.snapshot()
        try:
            turn = machine.step(answers)
        except InvalidAnswers as exc:
            json.dumps(exc.feedback)
            assert before == machine.snapshot(), "a refused step changes nothing"
            continue
        except SessionFinished:
            assert machine.finished
            continue
        assert_invariants(turn)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
SNAPSHOT_KEYS = [
    "intention", "asked_questions", "answered_questions", "missing_info", "schema_version",
    "flow", "flow_fingerprint", "state", "category", "other_for", "answers", "turn", "trace",
    "answered_by", "principals", "proofs", "owner", "digest",
]  # fmt: skip
snapshot_like = st.dictionaries(
    st.sampled_from(SNAPSHOT_KEYS),
    st.one_of(
        json_values,
        st.sampled_from(KNOWN_IDS).map(lambda k: [k]),
        st.sampled_from(["NeedCategory", "NeedPrimaryField", "NeedOther", "Done", "NoPatch"]),
    ),
)


@given(st.one_of(json_values, snapshot_like))
def test_random_json_as_a_snapshot_raises_only_invalid_snapshot(data: Any) -> None:
    """C9: random JSON restores or raises InvalidSnapshot; a restored one keeps the invariants."""
    try:
        machine = ClarificationMachine.from_snapshot(json.dumps(data))
    except InvalidSnapshot:
        return
    assert_invariants(machine.turn)


@given(intentions, st.lists(well_formed, min_size=1, max_size=4))
def test_a_session_snapshot_with_a_changed_field_is_refused(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C9: editing a real snapshot is refused, never half-restored: an input by its digest,
    what the inputs derive by the replay (D48), each naming its field."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    data = json.loads(machine.snapshot().model_dump_json())
    data["turn"] = data["turn"] + 1
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "turn" == info.value.field
    data = json.loads(machine.snapshot().model_dump_json())
    data["intention"] = data["intention"] + " now"
    with pytest.raises(InvalidSnapshot) as info:
        ClarificationMachine.from_snapshot(data)
    assert "digest" == info.value.field


edits = st.tuples(
    st.sampled_from(SNAPSHOT_KEYS[:-1]),
    st.one_of(
        json_values,
        st.sampled_from(KNOWN_IDS + OPTIONS + ["NeedOther", "Done", "NoPatch", "Other"]),
        st.integers(min_value=0, max_value=5),
        st.lists(st.sampled_from(KNOWN_IDS), max_size=3),
        st.dictionaries(st.sampled_from(KNOWN_IDS), st.sampled_from([*OPTIONS, OTHER, "x"])),
        st.lists(
            st.dictionaries(st.sampled_from(KNOWN_IDS), st.sampled_from([*OPTIONS, OTHER, "x"])),
            max_size=3,
        ),
        st.lists(st.sampled_from([*ANSWERED_BY, "person", None]), max_size=4),
        st.lists(st.sampled_from(["alice", "bob", " x", "\u202ealice", 7, None]), max_size=4),
        st.lists(st.sampled_from([PROOF.model_dump(), {"person": "x"}, None]), max_size=4),
    ),
)


@given(
    intentions,
    st.lists(well_formed, max_size=3),
    st.lists(edits, min_size=1, max_size=2),
    st.booleans(),
)
def test_no_edit_restores_into_what_its_inputs_do_not_produce(
    intention: str, steps: list[dict[str, Any]], changes: list[tuple[str, Any]], redigest: bool
) -> None:
    """C9: a one- or two-field edit, its digest removed or recomputed, is refused, or restores
    to exactly the position, category, trace and budget its own inputs produce."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    data = json.loads(machine.snapshot().model_dump_json())
    for key, value in changes:
        data[key] = value
    data["digest"] = None
    if redigest:
        with contextlib.suppress(ValueError):
            data["digest"] = SessionSnapshot.model_validate(data).content_digest()
    try:
        restored = ClarificationMachine.from_snapshot(data)
    except InvalidSnapshot:
        return
    assert_invariants(restored.turn)
    produced = advanced(restored.intention, [dict(s) for s in restored.snapshot().steps])
    assert produced is not None
    fields = ("state", "category", "other_for", "turn", "answers", "trace", "missing_info")
    mine, theirs = restored.snapshot(), produced.snapshot()
    assert [getattr(theirs, f) for f in fields] == [getattr(mine, f) for f in fields]
    if data.get("state") is not None:
        edited = SessionSnapshot.model_validate({**data, "digest": None})
        assert [getattr(mine, f) for f in fields] == [getattr(edited, f) for f in fields]


unicode_text = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), min_size=1, max_size=24
)
unicode_answers = st.dictionaries(
    st.sampled_from(KNOWN_IDS),
    st.one_of(unicode_text, st.sampled_from(OPTIONS), unicode_text.map(lambda t: "OAuth" + t)),
    max_size=4,
)


@given(st.one_of(intentions, unicode_text), st.lists(unicode_answers, max_size=4))
def test_nothing_invisible_or_undecodable_reaches_a_patch_trace_or_snapshot(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C5: no patch, trace or snapshot ever holds a surrogate, a Cf character (bar ZWJ in emoji),
    a private-use or unassigned code point; every accepted step snapshots and restores."""
    from preflight_fsm.text import refused

    machine = advanced(intention, [])
    if machine is None:
        return
    for answers in steps:
        key = pending_key(machine)
        if key is not None and key not in answers:
            answers = {**answers, key: OPTIONS[len(answers) % len(OPTIONS)]}
        try:
            turn = machine.step(answers)
        except (InvalidAnswers, SessionFinished):
            continue
        text = machine.snapshot().model_dump_json()  # encodes: no lone surrogate
        assert () == refused(json.loads(text)["intention"])
        for value in machine.answers.values():
            assert () == refused(value)
        for _, value in turn.patch.fields if turn.patch else ():
            assert () == refused(value)
        assert machine.snapshot() == ClarificationMachine.from_snapshot(text).snapshot()


# What renders as nothing (issue 23 item 5): default-ignorable code points (variation selectors,
# the Hangul fillers, U+034F, zero-width characters) and the braille blank; no emoji here, so
# none of them may join or style anything.
INVISIBLE = ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\ufe0f", "\ufe00",
             "\U000e0100", "\U000e01ef", "\u200b", "\u17b4", "\u180b"]  # fmt: skip
_SHOWS_NOTHING = regex.compile(r"[\p{Default_Ignorable_Code_Point}\u2800]")
hiding = st.lists(
    st.sampled_from([*INVISIBLE, "Solid", "MySQL", "a", " ", "\u039d\u0391"]),
    min_size=1,
    max_size=6,
).map("".join)


@given(intentions, st.lists(st.dictionaries(st.sampled_from(KNOWN_IDS), hiding), max_size=4))
def test_no_patch_value_hides_anything_or_is_a_look_alike_placeholder(
    intention: str, steps: list[dict[str, Any]]
) -> None:
    """C5: whatever invisible characters the answers carry, no recorded answer or patch value
    holds one (by Unicode's Default_Ignorable_Code_Point, judged here by the regex module, not
    by text.py), and none is Greek "NA", a placeholder in look-alike letters."""
    machine = advanced(intention, [])
    if machine is None:
        return
    for answers in steps:
        try:
            turn = machine.step(answers)
        except (InvalidAnswers, SessionFinished):
            continue
        fields = turn.patch.fields if turn.patch is not None else ()
        values = [*machine.answers.values(), *(value for _, value in fields)]
        assert [] == [v for v in values if _SHOWS_NOTHING.search(v) or v == "\u039d\u0391"]


REGISTRY = FlowRegistry(FLOW)
KEY = SealKeys((b"k" * 32,))
type_edits: st.SearchStrategy[tuple[str, Any]] = st.sampled_from(
    [
        ("turn", True),
        ("turn", 2.0),
        ("schema_version", 2.0),
        ("answered_questions", None),
        ("trace", [{"turn": True}]),
        ("seal", None),
        ("other_for", None),
        ("category", None),
        ("steps", []),
        ("steps", [{}]),
        ("answered_by", []),
        ("answered_by", ["user_form"]),
        ("answered_by", ["user_form", "user_form", "user_form"]),
        ("principals", []),
        ("principals", ["mallory"]),
        ("proofs", [None]),
        ("owner", "mallory"),
        ("owner", 1),
    ]
)


@given(
    intentions,
    st.lists(well_formed, max_size=3),
    st.lists(st.one_of(edits, type_edits), max_size=2),
    st.sampled_from(["removed", "kept", "recomputed"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_the_fast_restore_accepts_only_what_the_full_path_accepts(
    intention: str,
    steps: list[dict[str, Any]],
    changes: list[tuple[str, Any]],
    digest: str,
    sealed: bool,
    require_digest: bool,
    plain: bool,
) -> None:
    """C9: on mutants of real snapshots as JSON text (digest removed, kept or recomputed, sealed
    or not), restoring from the parsed JSON (by pydantic-core, or by the standard library as a
    command does) gives a session only where parse_snapshot then restore gives the same one, and
    always for a snapshot as written without a passkey proof (a proof takes the full path)."""
    machine = advanced(intention, steps)
    if machine is None:
        return
    keys = KEY if sealed else None
    written = json.loads(machine.snapshot(seal=keys).model_dump_json())
    data = dict(written)
    for key, value in changes:
        data[key] = value
    if digest == "removed":
        data["digest"] = None
    elif digest == "recomputed":
        with contextlib.suppress(ValueError):
            data["digest"] = SessionSnapshot.model_validate(data).content_digest()
    text = json.dumps(data)
    with standard_json(plain):
        fast = snapshot_fast.restored_json(text, REGISTRY, require_digest, keys)
    try:
        parsed = snapshot_module.parse_snapshot(
            text, REGISTRY, require_digest=require_digest, keys=keys
        )
        full: Session | None = snapshot_module.replay_snapshot(parsed, REGISTRY)
    except InvalidSnapshot:
        full = None
    if fast is not None:
        assert full is not None
        assert snapshot_module.snapshot_of(full) == snapshot_module.snapshot_of(fast)
    elif text == json.dumps(written) and not any(written["proofs"]):  # (== takes true for 1)
        raise AssertionError("a snapshot as written took the full path")
