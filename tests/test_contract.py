"""The contract checker (preflight_fsm.contract) and `preflight-fsm check`, replaying the corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import preflight_fsm.cli.check as check_cli
from preflight_fsm import ClarificationMachine, InvalidAnswers, MockLLMAdapter
from preflight_fsm.cli import app
from preflight_fsm.contract import RULES, Violation, check_decision_patch, check_llm_response
from preflight_fsm.flow import default_flow

CORPUS = Path(__file__).parent / "fixtures" / "responses"
sys.path.insert(0, str(CORPUS))
import record_responses  # noqa: E402

OTHER = "Other (specify)"


def records(name: str) -> list[dict[str, Any]]:
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def rules_of(record: dict[str, Any]) -> set[str]:
    items = check_cli.parse_items(json.dumps(record))
    return {f.violation.rule for f in check_cli.check_items(items)}


# -- the corpus ---------------------------------------------------------------------------------


def test_our_corpus_is_what_the_engine_gives() -> None:
    """ours.jsonl is exactly what record_responses.py records from the engine today."""
    expected = record_responses.render(record_responses.our_records())
    assert expected == (CORPUS / "ours.jsonl").read_text(encoding="utf-8")


def test_mock_corpus_is_what_preflights_gives() -> None:
    """preflights-mock.jsonl is exactly what the installed preflights 1.1.4 mock answers."""
    pytest.importorskip("preflights")
    from importlib.metadata import version

    assert "1.1.4" == version("preflights")
    expected = record_responses.render(record_responses.mock_records())
    assert expected == (CORPUS / "preflights-mock.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("record", records("ours.jsonl"), ids=lambda r: r["name"])
def test_every_response_of_ours_keeps_the_contract(record: dict[str, Any]) -> None:
    """Each recorded turn and patch of our engine has no violation."""
    assert set() == rules_of(record)


@pytest.mark.parametrize("record", records("bad.jsonl"), ids=lambda r: r["name"])
def test_hand_made_bad_response_breaks_exactly_its_rules(record: dict[str, Any]) -> None:
    """Each hand-made bad item is flagged with exactly the rules its `expect` names."""
    assert set(record["expect"]) == rules_of(record)


def test_every_rule_has_a_bad_example() -> None:
    """bad.jsonl breaks every rule the checker knows, and names no other."""
    named = {rule for record in records("bad.jsonl") for rule in record["expect"]}
    assert set(RULES) == named


MOCK_EXPECTED = {
    "mock: Add OAuth login: questions": {"C3-budget", "C3-one-field"},
    "mock: Add OAuth login: patch, all answered": set(),
    "mock: Add OAuth login: patch, first question answered": {"C6-invented"},
    "mock: Add a database for orders: questions": {"C3-budget", "C3-one-field"},
    "mock: Add a database for orders: patch, all answered": set(),
    "mock: Add a database for orders: patch, first question answered": {"C6-invented"},
    "mock: Build a React component: questions": {"C3-budget", "C3-one-field"},
    "mock: Build a React component: patch, all answered": set(),
    "mock: Build a React component: patch, first question answered": {"C6-invented"},
    "mock: Improve the checkout flow: questions": {"C3-budget", "C3-one-field", "C7-progress"},
    "mock: Improve the checkout flow: patch, all answered": {"C6-schema"},
    "mock: Improve the checkout flow: patch, first question answered": {
        "C6-schema",
        "C6-invented",
    },
    "mock: Add an API endpoint for invoices: questions": {
        "C3-budget",
        "C3-one-field",
        "C7-progress",
    },
    "mock: Add an API endpoint for invoices: patch, all answered": {"C6-schema"},
    "mock: Add an API endpoint for invoices: patch, first question answered": {
        "C6-schema",
        "C6-invented",
    },
    "mock: Add an author bio page: questions": {"C3-budget", "C3-one-field"},
    "mock: Add an author bio page: patch, all answered": set(),
    "mock: Add an author bio page: patch, first question answered": {"C6-invented"},
    "mock: Add OAuth login: asked again with session_state": {
        "C3-budget",
        "C3-one-field",
        "C5-reasked",
    },
    "mock: set_questions([])": {"C7-progress"},
    "mock: set_questions(choice without Other)": {"C2-other-last", "C2-companion"},
    "mock: force_invalid_patch": {"C6-schema"},
}


@pytest.mark.parametrize("record", records("preflights-mock.jsonl"), ids=lambda r: r["name"])
def test_preflights_mock_deviations_are_flagged(record: dict[str, Any]) -> None:
    """Preflights' mock is flagged for exactly its known deviations, item by item."""
    assert MOCK_EXPECTED[record["name"]] == rules_of(record)


def test_mock_invented_library_is_named() -> None:
    """The invented "Library: next-auth" is reported on the Library field."""
    (record,) = [
        r
        for r in records("preflights-mock.jsonl")
        if r["name"] == "mock: Add OAuth login: patch, first question answered"
    ]
    found = check_decision_patch(
        record["patch"], record["schema"], answers=record["answers"], intention=record["intention"]
    )
    assert [Violation("C6-invented", "'next-auth' is no answer the user gave", "Library")] == found


# -- any representation -------------------------------------------------------------------------


def test_models_dataclasses_and_dicts_are_judged_alike() -> None:
    """Our pydantic response, Preflights' dataclass and the JSON dict give the same verdict."""
    preflights = pytest.importorskip("preflights.adapters.mock_llm")
    from preflights.core.types import default_v1_heuristics

    from preflight_fsm.integrations.preflights import from_preflights_response

    theirs = preflights.MockLLMAdapter().generate_questions(
        "Add OAuth login", default_v1_heuristics()
    )
    as_dict = json.loads(json.dumps(from_preflights_response(theirs).model_dump(mode="json")))
    ours = from_preflights_response(theirs)
    assert check_llm_response(theirs) == check_llm_response(ours) == check_llm_response(as_dict)


def test_a_turn_is_a_response() -> None:
    """A Turn of our machine is checked as the response it shows."""
    assert [] == check_llm_response(ClarificationMachine("Add login").turn)


def test_a_placeholder_in_look_alike_letters_is_a_placeholder_in_a_patch() -> None:
    """C5/C6: a patch value of Greek "NA" (a placeholder's confusable skeleton) is reported."""
    patch = {"category": "Database", "fields": [["Type", "\u039d\u0391"]]}
    assert ["C6-placeholder"] == [v.rule for v in check_decision_patch(patch)]


def test_none_patch_is_a_valid_outcome() -> None:
    """None from extract_decision_patch breaks nothing (spec §11 Decision #2)."""
    assert [] == check_decision_patch(None)


def test_non_object_response_is_a_shape_violation() -> None:
    """Something that is no object at all is one shape violation, not an exception."""
    assert ["shape"] == [v.rule for v in check_llm_response(42)]


def test_violation_renders_rule_subject_and_message() -> None:
    """str() of a violation reads `rule [subject]: message`; to_dict() is JSON-ready."""
    violation = Violation("C3-budget", "asks 3 questions", "a, b, c")
    assert "C3-budget [a, b, c]: asks 3 questions" == str(violation)
    assert {"rule": "C3-budget", "subject": "a, b, c", "message": "asks 3 questions"} == (
        violation.to_dict()
    )


# -- the command --------------------------------------------------------------------------------

runner = CliRunner()


def run_check(*args: str, stdin: str | None = None) -> Any:
    return runner.invoke(app, ["check", *args], input=stdin)


def test_check_passes_our_corpus() -> None:
    """`check` exits 0 on our engine's corpus and says how many items it read."""
    result = run_check(str(CORPUS / "ours.jsonl"))
    assert (0, f"{len(records('ours.jsonl'))} items checked, 0 violation(s)") == (
        result.exit_code,
        result.stdout.strip(),
    )


def test_check_flags_preflights_mock() -> None:
    """`check` exits 1 on Preflights' mock and prints one line per violation, with its line."""
    result = run_check(str(CORPUS / "preflights-mock.jsonl"))
    assert 1 == result.exit_code
    assert "preflights-mock.jsonl:1: mock: Add OAuth login: questions: C3-budget" in result.stdout


def test_check_reads_one_json_response_from_stdin() -> None:
    """A single (pretty-printed) JSON response can come on standard input as `-`."""
    response = MockLLMAdapter().generate_questions("Add login").model_dump(mode="json")
    result = run_check("-", stdin=json.dumps(response, indent=2))
    assert (0, "1 item checked, 0 violation(s)") == (result.exit_code, result.stdout.strip())


def test_check_json_output() -> None:
    """--json prints the findings as one JSON object."""
    line = json.dumps({"name": "x", "patch": {"category": "Database", "fields": [["Type", "tbd"]]}})
    result = run_check("--json", "-", stdin=line)
    report = json.loads(result.stdout)
    assert (1, 1, ["C6-placeholder"]) == (
        result.exit_code,
        report["checked"],
        [v["rule"] for v in report["violations"]],
    )


@pytest.mark.parametrize(
    "text",
    ["not json\n", '{"questions": []}\n[1]\n', '{"neither": 1}', "", '{"patch": {}, "mystery": 1}'],
    ids=["not-json", "not-an-object", "not-an-item", "empty", "unknown-record-key"],
)
def test_check_unreadable_input_exits_2(text: str) -> None:
    """Input that is no JSON item exits with the distinct code 2 and says why on stderr."""
    result = run_check("-", stdin=text)
    assert 2 == result.exit_code
    assert result.stderr.startswith("preflight-fsm: -: ")


def test_check_missing_file_exits_2(tmp_path: Path) -> None:
    """A file that cannot be read exits 2."""
    assert 2 == run_check(str(tmp_path / "absent.jsonl")).exit_code


# -- our engine never breaks the contract -------------------------------------------------------

_FLOW = default_flow()
_WORDS = [
    "add",
    "the",
    "checkout",
    "author",
    "feedback",
    "build",
    "page",
    *(k for c in _FLOW.categories for k in c.keywords),
]
_VALUES = [
    *(o for c in _FLOW.categories for o in c.question.options),
    *(c.name for c in _FLOW.categories),
    OTHER,
    "other",
    "Payments",
    "database",
    "Passkeys",
    "",
    "TBD",
    "n/a",
    "  spaced   text ",
    ["React"],
]
_IDS = sorted(
    {
        _FLOW.category_question.id,
        f"{_FLOW.category_question.id}__other",
        _FLOW.other_category.description_id,
        *(c.question.id for c in _FLOW.categories),
        *(f"{c.question.id}__other" for c in _FLOW.categories),
        *(s.id for c in _FLOW.categories for s in c.secondary),
    }
)


_TEXTS = [v for v in _VALUES if v not in (OTHER, "other")]
_CHOICES = {_FLOW.category_question.id, *(c.question.id for c in _FLOW.categories)}
# Built once, not per draw (a strategy's construction costs more than drawing from it).
_CHOICE_VALUE = st.sampled_from(_VALUES)
_TEXT_VALUE = st.sampled_from(_TEXTS)
_EXTRA_IDS = st.lists(st.sampled_from(_IDS), max_size=2)


@st.composite
def _answers(draw: st.DrawFn, machine: ClarificationMachine) -> dict[str, Any]:
    """Mostly the pending question (and its companion), sometimes volunteered extras.

    Free text is never "Other (specify)" or "other": the engine refuses it (test_machine.py).
    """

    def value(qid: str) -> Any:
        return draw(_CHOICE_VALUE if qid in _CHOICES else _TEXT_VALUE)

    answers: dict[str, Any] = {}
    for question in machine.turn.questions:
        if draw(st.booleans()) or not question.optional:
            answers[question.id] = value(question.id)
    for qid in draw(_EXTRA_IDS):
        if qid not in machine.answers:  # a different value for a recorded answer is an error
            answers.setdefault(qid, value(qid))
    return answers


def _safe_answer(machine: ClarificationMachine) -> dict[str, str]:
    """An answer the pending question always accepts: its first option, or plain text."""
    question = machine.turn.questions[0]
    return {question.id: question.options[0] if question.options else "Payments"}


@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
    data=st.data(),
)
def test_engine_never_breaks_the_contract(words: list[str], data: st.DataObject) -> None:
    """On any intention and answer path, every turn and patch of ours keeps the contract."""
    machine = ClarificationMachine(" ".join(words))
    sent: dict[str, Any] = {}
    while True:
        turn = machine.turn
        state = machine.snapshot()
        assert [] == check_llm_response(turn, session_state=state)
        assert [] == check_llm_response(turn.to_llm_response().model_dump(mode="json"), state)
        if turn.finished:
            assert [] == check_decision_patch(turn.patch, answers=sent, intention=machine.intention)
            return
        answers = data.draw(_answers(machine))
        try:
            machine.step(answers)
        except InvalidAnswers:  # refused answers change nothing (C5); move on with a sure one
            answers = _safe_answer(machine)
            machine.step(answers)
        sent.update(answers)
