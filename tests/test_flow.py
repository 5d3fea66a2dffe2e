"""The flow as frozen data (C2, C4): the default equals the spec's tables; TOML flows load."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from preflight_fsm import ClarificationMachine, InvalidFlow, default_flow, load_flow
from preflight_fsm.flow import Flow, flow_from_data
from preflight_fsm.flow_data import DEFAULT_FLOW_FILE
from preflight_fsm.flow_registry import FlowRegistry

SPEC_QUESTIONS = {
    # category: (question id, text, options, field, hint, secondary)
    "Authentication": (
        "auth_strategy",
        "Which authentication approach?",
        ("OAuth", "Email/Password", "Magic Link"),
        "Strategy",
        "adr",
        (("auth_library", "Library"),),
    ),
    "Database": (
        "db_type",
        "Which database type?",
        ("PostgreSQL", "MySQL", "MongoDB"),
        "Type",
        "adr",
        (("db_orm", "ORM"),),
    ),
    "Frontend": (
        "frontend_framework",
        "Which framework?",
        ("React", "Vue", "Svelte"),
        "Framework",
        "task",
        (("styling", "Styling"),),
    ),
    "Backend": (
        "backend_api_style",
        "Which API style?",
        ("REST", "GraphQL", "gRPC"),
        "API_Style",
        "adr",
        (("backend_framework", "Framework"),),
    ),
    "Infra": (
        "infra_hosting",
        "Which hosting approach?",
        ("Cloud", "Self-hosted", "Serverless"),
        "Hosting",
        "adr",
        (("infra_ci_cd", "CI_CD"),),
    ),
}


def test_default_flow_equals_the_spec_tables() -> None:
    """C2: questions, options, patch fields, hints and secondaries of spec §3.2/§5.1/§6."""
    flow = default_flow()
    actual = {
        c.name: (
            c.question.id,
            c.question.text,
            c.question.options,
            c.question.field,
            c.hint,
            tuple((s.id, s.field) for s in c.secondary),
        )
        for c in flow.categories
    }
    assert SPEC_QUESTIONS == actual
    assert [
        "Frontend",
        "Backend",
        "Database",
        "Authentication",
        "Infra",
    ] == [c.name for c in flow.categories]
    assert ("change_category", "What type of change is this?") == (
        flow.category_question.id,
        flow.category_question.text,
    )
    assert ("Other", "description", "Description", "unsure") == (
        flow.other_category.name,
        flow.other_category.description_id,
        flow.other_category.field,
        flow.other_category.hint,
    )
    assert 3 == flow.limits.max_turns


def test_default_keywords_include_spec_section_9() -> None:
    """C4: spec §9's keywords are all in the default lists."""
    keywords = {c.name: set(c.keywords) for c in default_flow().categories}
    assert {"auth", "login", "oauth", "jwt"} <= keywords["Authentication"]
    assert {"database", "db", "postgres", "mysql"} <= keywords["Database"]
    assert {"frontend", "ui", "react", "component"} <= keywords["Frontend"]
    assert {"api", "endpoint", "backend"} <= keywords["Backend"]
    assert {"deploy", "docker", "ci", "infra"} <= keywords["Infra"]


def test_flows_are_frozen() -> None:
    """Flow as data: a flow cannot be changed after it is built."""
    with pytest.raises(ValidationError):
        default_flow().name = "changed"  # type: ignore[misc]


def test_fingerprint_is_stable_and_content_based() -> None:
    """C9: the fingerprint depends on the content only."""
    same = flow_from_data({})
    other = flow_from_data({"name": "custom"})
    assert default_flow().fingerprint == same.fingerprint
    assert default_flow().fingerprint != other.fingerprint


PAYMENTS = """
name = "payments"

[[categories]]
name = "Payments"
hint = "adr"
keywords = ["stripe", "payment", "billing"]

[categories.question]
id = "payment_provider"
text = "Which payment provider?"
options = ["Stripe", "Adyen"]
field = "Provider"

[[categories.secondary]]
id = "payment_currency"
field = "Currency"
"""


def test_a_toml_flow_runs_a_session(tmp_path: Path) -> None:
    """A flow loaded from TOML drives the machine with its own questions and keywords."""
    path = tmp_path / "payments.toml"
    path.write_text(PAYMENTS)
    flow = load_flow(path)
    machine = ClarificationMachine("Add Stripe checkout", flow)
    assert ["payment_provider", "payment_provider__other"] == [q.id for q in machine.turn.questions]
    turn = machine.step({"payment_provider": "adyen", "payment_currency": "EUR"})
    assert turn.patch is not None
    assert ("Payments", (("Provider", "Adyen"), ("Currency", "EUR"))) == (
        turn.patch.category,
        turn.patch.fields,
    )


def test_unknown_keys_are_refused_with_their_names(tmp_path: Path) -> None:
    """A flow file with keys it does not know fails, naming each of them."""
    path = tmp_path / "bad.toml"
    path.write_text("x = 1\n" + PAYMENTS.replace('hint = "adr"', 'hint = "adr"\ncolour = "red"'))
    with pytest.raises(InvalidFlow) as info:
        load_flow(path)
    assert "categories.0.colour" in str(info.value)
    assert "x" in info.value.ids


def test_duplicate_question_ids_fail_with_the_ids() -> None:
    """A broken flow fails when built, naming the offending ids."""
    data = {
        "categories": [
            {
                "name": name,
                "hint": "adr",
                "question": {"id": "same_id", "text": "?", "options": ["A"], "field": "F"},
            }
            for name in ("One", "Two")
        ]
    }
    with pytest.raises(InvalidFlow, match="same_id") as info:
        flow_from_data(data)
    assert "same_id" in info.value.ids


def test_a_flow_without_categories_fails_naming_the_unreachable_state() -> None:
    """C1: the machine is checked when built; a state no edge reaches is named."""
    flow = flow_from_data({"name": "empty", "categories": []})
    with pytest.raises(InvalidFlow, match="NeedPrimaryField") as info:
        ClarificationMachine("anything at all", flow)
    assert "NeedPrimaryField" in info.value.ids


def test_unreadable_and_malformed_files_fail_clearly(tmp_path: Path) -> None:
    """A missing file or broken TOML raises InvalidFlow saying which."""
    with pytest.raises(InvalidFlow, match="cannot read"):
        load_flow(tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = ")
    with pytest.raises(InvalidFlow, match="not valid TOML"):
        load_flow(broken)


def test_other_option_may_not_be_listed_as_an_option() -> None:
    """C2: "Other (specify)" is appended to every choice question, never listed."""
    data = {
        "categories": [
            {
                "name": "One",
                "hint": "adr",
                "question": {"id": "q", "text": "?", "options": ["A", "Other"], "field": "F"},
            }
        ]
    }
    with pytest.raises(InvalidFlow, match="appended"):
        flow_from_data(data)


def test_the_default_flow_is_the_shipped_flow_file() -> None:
    """The default flow is a TOML file in the package: the format's complete example."""
    from preflight_fsm.flow import DEFAULT_FLOW_FILE

    assert default_flow() == load_flow(DEFAULT_FLOW_FILE)


def test_the_default_flows_fingerprints_are_pinned() -> None:
    """C10, D261: changing what replay depends on in the default flow strands stored sessions
    (register the old one); the legacy content fingerprint is the one 0.1.0 sessions carry."""
    assert ("f89c69ac6331d44d", "933558696d03ac0d") == default_flow().fingerprints


def _default_with(change: Callable[[dict[str, Any]], None]) -> Flow:
    data = default_flow().model_dump()
    change(data)
    return flow_from_data(data)


def _set_question_text(data: dict[str, Any]) -> None:
    data["categories"][0]["question"]["text"] = "Which front-end framework?"


def _set_category_question_text(data: dict[str, Any]) -> None:
    data["category_question"]["text"] = "What kind of change is it?"


@pytest.mark.parametrize("reword", [_set_question_text, _set_category_question_text])
def test_rewording_a_question_keeps_the_fingerprint(
    reword: Callable[[dict[str, Any]], None],
) -> None:
    """D261: replay never reads a question's wording: it stays out of the fingerprint (the
    content fingerprint, which keys the engine, still tells the two apart)."""
    reworded = _default_with(reword)
    assert default_flow().fingerprint == reworded.fingerprint
    assert default_flow().content_fingerprint != reworded.content_fingerprint


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["categories"][0]["question"].update(options=["React", "Vue"]),
        lambda d: d["categories"][0].update(keywords=["frontend", "widget"]),
        lambda d: d["categories"][0].update(name="Client"),
        lambda d: d["categories"][0]["question"].update(id="ui_framework"),
        lambda d: d["categories"][0]["question"].update(field="UI library"),
        lambda d: d["categories"][0].update(hint="adr"),
        lambda d: d["limits"].update(max_answer_chars=400),
        lambda d: d.update(other_option="Something else"),
        lambda d: d.update(placeholders=["tbd"]),
    ],
    ids=["option", "keyword", "category", "id", "field", "hint", "limit", "other", "placeholder"],
)
def test_changing_what_replay_reads_changes_the_fingerprint(
    change: Callable[[dict[str, Any]], None],
) -> None:
    """D261: options, keywords, category names, ids, fields, hints, limits, the Other label
    (answers naming it are taken as Other) and placeholders decide a replay: a new fingerprint."""
    assert default_flow().fingerprint != _default_with(change).fingerprint


def test_a_registry_answers_to_the_legacy_content_fingerprint() -> None:
    """D261: sessions and decisions made before carry the content fingerprint; it still names
    the flow."""
    registry = FlowRegistry(default_flow())
    assert default_flow() is registry.get(default_flow().content_fingerprint)


def test_the_current_flow_answers_for_an_earlier_version_that_only_words_it_otherwise() -> None:
    """D261: a reworded current flow and its kept earlier version share a fingerprint; sessions
    on it run in the current words, each version's content fingerprint still names itself."""
    earlier = default_flow()
    current = _default_with(_set_category_question_text)
    registry = FlowRegistry(current, [earlier])
    assert (current, earlier) == (
        registry.get(current.fingerprint),
        registry.get(earlier.content_fingerprint),
    )
    assert (current.fingerprint, current.content_fingerprint, earlier.content_fingerprint) == (
        registry.aliases(earlier.content_fingerprint)
    )


# -- issue 23: flow files that would break later ---------------------------------------------


def test_a_flow_file_beyond_its_limit_is_refused_unread(tmp_path: Path) -> None:
    """A flow file is read up to MAX_FLOW_FILE_BYTES and one byte: a huge file is refused saying
    so, never read to its end; /dev/zero is no file at all."""
    from preflight_fsm.flow import MAX_FLOW_FILE_BYTES

    huge = tmp_path / "huge.toml"
    huge.write_text("#" * (MAX_FLOW_FILE_BYTES + 1))
    with pytest.raises(InvalidFlow, match="larger than 1,048,576 bytes"):
        load_flow(huge)
    with pytest.raises(InvalidFlow, match="is a device, not a regular file"):
        load_flow("/dev/zero")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"name": "team\nnode [label=evil]"}, "line break"),
        ({"other_option": "Other\u202e"}, r"U\+202E"),
        ({"category_question": {"text": "What\ttype?"}}, r"U\+0009"),
        ({"other_category": {"name": "O" * 201}}, "at most 200 fit in a snapshot"),
        ({"limits": {"max_answer_chars": 100_001}}, "at most 100,000 characters"),
        ({"limits": {"max_intention_chars": 100_001}}, "at most 100,000 characters"),
    ],
    ids=["newline-in-name", "bidi-in-other-option", "tab-in-text", "name-over-200",
         "answer-limit-over-snapshot", "intention-limit-over-snapshot"],
)  # fmt: skip
def test_a_flow_a_snapshot_or_a_diagram_could_not_hold_is_refused_at_load(
    data: dict[str, object], problem: str
) -> None:
    """Control characters in names, ids and texts (a newline would inject into DOT output), texts
    longer than a snapshot holds, and limits above its values fail when the flow is loaded."""
    with pytest.raises(InvalidFlow, match=problem):
        flow_from_data(data)


def test_a_category_name_over_200_characters_is_refused_at_load(tmp_path: Path) -> None:
    """A category named with 201 characters fails at load, not when its first session is saved."""
    flow = tmp_path / "long.toml"
    flow.write_text(
        f'[[categories]]\nname = "{"C" * 201}"\nhint = "task"\n'
        'question = { id = "q", text = "Which?", options = ["A"], field = "F" }\n'
    )
    with pytest.raises(InvalidFlow, match="201 characters long"):
        load_flow(flow)


def test_a_misspelled_flow_key_names_the_key_it_nearly_spells(tmp_path: Path) -> None:
    """A flow file's `keyword` is refused with "did you mean keywords?" (issue 31 point 5)."""
    path = tmp_path / "typo.toml"
    path.write_text(PAYMENTS.replace('hint = "adr"', 'hint = "adr"\nkeyword = ["pay"]'))
    with pytest.raises(InvalidFlow, match=r"categories\.0\.keyword \(did you mean keywords\?\)"):
        load_flow(path)


def test_the_default_flow_registers_the_versions_kept_in_default_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flow file in `flows/default.versions/` is registered beside the default flow (C10)."""
    import preflight_fsm.flow_registry as registry_module

    (tmp_path / "default.toml").write_text(DEFAULT_FLOW_FILE.read_text())
    (tmp_path / "default.versions").mkdir()
    (tmp_path / "default.versions" / "1.toml").write_text(PAYMENTS)
    monkeypatch.setattr(registry_module, "DEFAULT_FLOW_FILE", tmp_path / "default.toml")
    registry = registry_module.default_registry.__wrapped__()
    assert load_flow(tmp_path / "default.versions" / "1.toml") == registry.get(
        load_flow(tmp_path / "default.versions" / "1.toml").fingerprint
    )


def _default_data_with(**limits: int) -> dict[str, object]:
    import tomllib

    from preflight_fsm.flow import DEFAULT_FLOW_FILE

    data = tomllib.loads(DEFAULT_FLOW_FILE.read_text())
    data.setdefault("limits", {}).update(limits)
    return data


def test_a_flow_whose_limits_allow_an_unstorable_snapshot_is_refused_naming_the_limits() -> None:
    """Issue 30: within the flow's limits a session grew past what a snapshot holds, was
    acknowledged, then read as corrupt; such a flow is refused when loaded."""
    data = _default_data_with(max_intention_chars=100_000, max_answer_chars=100_000)
    with pytest.raises(InvalidFlow, match=r"limits\.max_answer_chars") as info:
        flow_from_data(data)
    assert "262,144" in str(info.value)
    assert "limits.max_intention_chars" in info.value.ids


@pytest.mark.parametrize("path", ["diagrams/examples/default.toml", "diagrams/examples/next.toml"])
def test_the_shipped_flows_fit_a_snapshot_and_load(path: str) -> None:
    root = Path(__file__).parent.parent
    assert load_flow(root / path).limits.max_answer_chars >= 1
    assert default_flow().limits.max_answer_chars >= 1


def test_every_session_within_a_loaded_flows_limits_is_stored_and_read_back() -> None:
    """The largest session the default flow's limits allow, each answer at its longest, in the
    widest characters, restores from its stored snapshot."""
    from preflight_fsm.store.memory import MemoryStore
    from preflight_fsm.store.sessions import Sessions

    flow = default_flow()
    wide = "\U0001d538"  # 4 bytes in UTF-8
    machine = ClarificationMachine(wide * flow.limits.max_intention_chars, flow)
    sessions = Sessions(MemoryStore(), flow=flow)
    record = sessions.create(machine)
    answers = {"change_category": "Other (specify)"}
    answers["change_category__other"] = wide * flow.limits.max_answer_chars
    machine.step(answers)
    record = sessions.save(record.id, machine, record.version)
    restored, _ = sessions.load(record.id)
    assert machine.steps == restored.steps
