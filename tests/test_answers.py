"""answers.py: normalising, validating and refusing a step's answers (C5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preflight_fsm import (
    ClarificationMachine,
    InvalidAnswers,
    InvalidIntention,
)

OTHER = "Other (specify)"
NO_KEYWORDS = "Improve the feedback form"


def refused(machine: ClarificationMachine, answers: Any) -> dict[str, Any]:
    before = machine.snapshot()
    with pytest.raises(InvalidAnswers) as info:
        machine.step(answers)
    assert before == machine.snapshot(), "a refused step must leave the session unchanged (C5)"
    json.dumps(info.value.feedback)  # JSON-serialisable
    return info.value.feedback


# -- answers (C5) ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("  oauth ", "OAuth"),
        ("MAGIC   link", "Magic Link"),
        (["Email/Password"], "Email/Password"),
        (("OAuth",), "OAuth"),
    ],
    ids=["stripped-case", "collapsed-space", "one-element-list", "one-element-tuple"],
)
def test_choice_answers_match_options_case_insensitively(given: Any, recorded: str) -> None:
    """C5: values are stripped and collapsed; options match case-insensitively, canonically."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": given})
    assert turn.patch is not None
    assert (("Strategy", recorded),) == turn.patch.fields


def test_other_matches_the_canonical_other_option() -> None:
    """C5: "other" matches "Other (specify)"."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "other"})
    assert OTHER == machine.answers["auth_strategy"]


@pytest.mark.parametrize(
    "blank", [None, "", "   ", [], "TBD", "todo", "N/A", "na", "null", "?", "-", "...", "…"]
)
def test_blank_or_placeholder_for_the_pending_key_is_a_decline(blank: Any) -> None:
    """C5: a blank or placeholder for the pending key ends the session in NoPatch."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": blank})
    assert ("NoPatch", None, ("auth_strategy",)) == (turn.state, turn.patch, turn.missing_info)


@pytest.mark.parametrize(
    "look_alike",
    ["\u039d\u0391", "\u03a4\u0392\u0391", "\u0422\u0412\u0410"],
    ids=["greek-NA", "greek-TBA", "cyrillic-TBA"],
)
def test_a_placeholder_in_look_alike_letters_is_a_decline(look_alike: str) -> None:
    """C5: placeholders match on their TS #39 skeleton: Greek "NA" is "na", never a patch value."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": look_alike})
    assert ("NoPatch", None) == (turn.state, turn.patch)


def test_an_intention_of_a_look_alike_placeholder_is_refused() -> None:
    """C5: a Cyrillic "TBA" intention says nothing, like "TBA"."""
    with pytest.raises(InvalidIntention, match="says nothing"):
        ClarificationMachine("\u0422\u0412\u0410")


@pytest.mark.parametrize(
    ("value", "code_point"),
    [
        ("Solid" + "".join(chr(0xE0100 + b) for b in b"exfiltrate"), "U+E0165"),
        ("\u3164", "U+3164"),
        ("Solid\u034f", "U+034F"),
        ("\u115f", "U+115F"),
        ("\u1160", "U+1160"),
        ("\uffa0", "U+FFA0"),
        ("\u2800", "U+2800"),
    ],
    ids=["variation-selector-payload", "hangul-filler", "grapheme-joiner",
         "choseong-filler", "jungseong-filler", "halfwidth-filler", "braille-blank"],
)  # fmt: skip
def test_invisible_values_are_refused_naming_the_code_point(value: str, code_point: str) -> None:
    """C5: default-ignorable code points, stray variation selectors and the braille blank are
    refused, so no patch holds a hidden payload or a value that renders blank."""
    machine = ClarificationMachine("Migrate the database")
    feedback = refused(machine, {"db_type": value})
    assert code_point in feedback["issues"]["invalid"][0]["problem"]


def test_none_is_a_real_answer() -> None:
    """C5: "none" is not a placeholder ("ORM: none")."""
    machine = ClarificationMachine("Migrate the database")
    turn = machine.step({"db_type": "PostgreSQL", "db_orm": "none"})
    assert turn.patch is not None
    assert (("Type", "PostgreSQL"), ("ORM", "none")) == turn.patch.fields


def test_other_with_a_blank_companion_is_not_a_decline() -> None:
    """C5: "Other (specify)" with a blank companion owes the text: NeedOther, not NoPatch."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": OTHER, "auth_strategy__other": "   "})
    assert ("NeedOther", ("auth_strategy",)) == (turn.state, turn.missing_info)


def test_an_absent_pending_key_is_a_missing_issue() -> None:
    """C5: leaving the pending key out is an error naming the key, not a decline."""
    feedback = refused(ClarificationMachine("Add OAuth login"), {"auth_library": "Auth.js"})
    assert ["auth_strategy"] == [m["field"] for m in feedback["issues"]["missing"]]
    assert "auth_strategy" in feedback["action"]


def test_in_need_other_the_missing_key_is_the_free_text() -> None:
    """C5: in NeedOther the pending key to send is `<qid>__other`."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": OTHER})
    feedback = refused(machine, {"auth_strategy": OTHER})
    assert ["auth_strategy__other"] == [m["field"] for m in feedback["issues"]["missing"]]


def test_unknown_ids_are_listed_and_nothing_is_recorded() -> None:
    """C5: ids the flow does not know go to `unknown`; the step is refused whole."""
    feedback = refused(
        ClarificationMachine("Add OAuth login"),
        {"auth_strategy": "OAuth", "colour": "blue"},
    )
    assert ["colour"] == feedback["issues"]["unknown"]
    assert 1 == feedback["issue_count"]


def test_an_unknown_id_that_nearly_spells_one_is_named_in_the_action() -> None:
    """The action names the id a misspelled key nearly spells; the key stays unknown (C5)."""
    feedback = refused(
        ClarificationMachine("Improve the checkout flow"), {"change_categroy": "Database"}
    )
    assert ["change_categroy"] == feedback["issues"]["unknown"]
    assert "('change_categroy': did you mean 'change_category'?)" in feedback["action"]


def test_feedback_has_the_documented_shape_and_never_says_try_again() -> None:
    """C5: the feedback is {result, issues{invalid, missing, unknown}, issue_count, action}."""
    feedback = refused(
        ClarificationMachine("Add OAuth login"), {"auth_strategy": ["OAuth", "SAML"], "x": "1"}
    )
    assert {"result", "issues", "issue_count", "action"} == set(feedback)
    assert "validation_failed" == feedback["result"]
    (invalid,) = feedback["issues"]["invalid"]
    assert {"field", "provided", "problem", "requirement"} == set(invalid)
    assert "several values" in invalid["problem"]
    assert "try again" not in feedback["action"].lower()


def test_identical_resend_is_accepted_and_ignored() -> None:
    """C5: callers may resend cumulative dicts; an identical answer changes nothing."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": "Authentication"})
    turn = machine.step({"change_category": "authentication", "auth_strategy": "OAuth"})
    assert "Done" == turn.state


def test_a_custom_value_resent_equals_other_with_that_text() -> None:
    """C5: a custom value is recorded as Other + text, so resending either form is identical."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": OTHER})
    machine.step({"change_category": "Other", "change_category__other": "our postgres db"})
    turn = machine.step({"change_category": "our postgres db", "db_type": "MySQL"})
    assert "Done" == turn.state


def test_a_different_value_for_a_resolved_question_is_a_conflict() -> None:
    """C5: changing a recorded answer is an `invalid` conflict; the session is unchanged."""
    machine = ClarificationMachine(NO_KEYWORDS)
    machine.step({"change_category": "Authentication"})
    feedback = refused(machine, {"change_category": "Database", "auth_strategy": "OAuth"})
    (issue,) = feedback["issues"]["invalid"]
    assert "change_category" == issue["field"]
    assert "conflicts" in issue["problem"]


def test_a_companion_counts_only_when_its_question_is_other() -> None:
    """C5: `<qid>__other` is ignored unless `<qid>` is "Other (specify)"."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "OAuth", "auth_strategy__other": "SAML"})
    assert turn.patch is not None
    assert (("Strategy", "OAuth"),) == turn.patch.fields
    assert "auth_strategy__other" not in machine.answers


def test_blank_volunteered_answers_are_no_answer() -> None:
    """C5: a blank anywhere but the pending key is simply no answer."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "OAuth", "auth_library": "tbd"})
    assert turn.patch is not None
    assert (("Strategy", "OAuth"),) == turn.patch.fields


@pytest.mark.parametrize(
    ("answers", "field", "problem"),
    [
        ({"auth_strategy": "x" * 501}, "auth_strategy", "limit is 500"),
        (
            {"auth_strategy": "OAuth\x00"},
            "auth_strategy",
            "control or unassigned characters (U+0000 control)",
        ),
        ({"auth_strategy": 3}, "auth_strategy", "must be text"),
        ({"auth_strategy": ["OAuth", 1]}, "auth_strategy", "only strings"),
        ({f"k{i}": "v" for i in range(33)}, "answers", "too many"),
    ],
    ids=["too-long", "control-char", "not-text", "list-of-non-text", "too-many"],
)
def test_limits_are_refused_as_invalid(answers: dict[str, Any], field: str, problem: str) -> None:
    """C5 limits: 500 characters, no control characters, text only, at most 32 answers."""
    feedback = refused(ClarificationMachine("Add OAuth login"), answers)
    invalid = feedback["issues"]["invalid"]
    assert [field] == [i["field"] for i in invalid]
    assert problem in invalid[0]["problem"]


def test_answers_must_be_a_mapping() -> None:
    """C5: anything but an object of answers is one `invalid` issue on `answers`."""
    feedback = refused(ClarificationMachine("Add OAuth login"), ["OAuth"])
    assert "answers" == feedback["issues"]["invalid"][0]["field"]


def test_crlf_and_tabs_are_accepted_and_collapsed() -> None:
    """C5: \\r\\n and \\r become \\n; tab and newline are allowed; runs of space collapse."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"auth_strategy": "Single\r\nsign-on\r\tvia  SAML"})
    assert turn.patch is not None
    assert (("Strategy", "Single sign-on via SAML"),) == turn.patch.fields


@pytest.mark.parametrize(
    "intention",
    ["", "   ", "TBD", "x" * 2001, "bad\x07bell", 42],
    ids=["empty", "blank", "placeholder", "too-long", "control", "not-text"],
)
def test_invalid_intentions_are_refused(intention: Any) -> None:
    """C5: the intention is 1-2000 characters after stripping, no placeholder, no controls."""
    with pytest.raises(InvalidIntention, match="send"):
        ClarificationMachine(intention)


@pytest.mark.parametrize(
    "answers",
    [
        {"frontend_framework__other": OTHER},
        {"frontend_framework__other": "other"},
        {"frontend_framework__other": "Vue", "styling": "Other (Specify)"},
    ],
    ids=["companion-option", "companion-other", "volunteered-option"],
)
def test_the_other_option_is_never_taken_as_free_text(answers: dict[str, str]) -> None:
    """Spec §5.2 Rule 2 / C5: "Other (specify)" typed as text is refused, never a patch value."""
    machine = ClarificationMachine("Build a frontend settings page")
    machine.step({"frontend_framework": OTHER})
    feedback = refused(machine, answers)
    assert "itself" in feedback["issues"]["invalid"][0]["problem"]


def test_after_the_shortcut_naming_the_same_category_is_accepted_and_ignored() -> None:
    """C5: the intention resolved the category; saying it again changes nothing."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step({"change_category": "authentication", "auth_strategy": "OAuth"})
    assert "Done" == turn.state
    assert {"auth_strategy": "OAuth"} == machine.answers


@pytest.mark.parametrize("value", ["Database", OTHER, "Billing"], ids=str)
def test_after_the_shortcut_another_category_is_a_conflict_never_dropped(value: str) -> None:
    """C5/C6: the problem says the intention already resolved the category, and as what."""
    machine = ClarificationMachine("Add OAuth login")
    feedback = refused(machine, {"change_category": value, "auth_strategy": "OAuth"})
    issue = feedback["issues"]["invalid"][0]
    assert "change_category" == issue["field"]
    assert "already resolved: 'Authentication'" in issue["problem"]


# -- issue 23: a relabelled "Other (specify)" (C2) -----------------------------------------------


def _relabelled() -> Any:
    from preflight_fsm.flow import flow_from_data

    return flow_from_data({"other_option": "Something else"})


def test_the_canonical_other_works_on_a_flow_that_relabels_it() -> None:
    """C2: with other_option = "Something else", the spec's own shape {"qid": "Other (specify)",
    "qid__other": text} still completes the session with the text."""
    machine = ClarificationMachine("Migrate the database", _relabelled())
    turn = machine.step({"db_type": OTHER, "db_type__other": "KaiOS"})
    assert turn.patch is not None
    assert (("Type", "KaiOS"),) == turn.patch.fields


def test_the_label_of_other_is_recorded_as_the_canonical_value() -> None:
    """C2: choosing the label a person sees records "Other (specify)" and owes its text; the
    label never becomes a patch value."""
    machine = ClarificationMachine("Migrate the database", _relabelled())
    turn = machine.step({"db_type": "something ELSE"})
    assert ("NeedOther", OTHER) == (turn.state, machine.answers["db_type"])


def test_a_relabelled_flow_still_lists_the_canonical_other() -> None:
    """C2: the questions end with the canonical "Other (specify)", the companion depends on it;
    only a person's rendering shows the label."""
    from preflight_fsm.cli.render import render_turn

    flow = _relabelled()
    machine = ClarificationMachine("Migrate the database", flow)
    choice, companion = machine.turn.questions
    assert (OTHER, OTHER) == ((choice.options or ())[-1], companion.depends_on_value)
    assert render_turn(machine.turn, flow).endswith("4. Something else")


@pytest.mark.parametrize(
    ("answers", "description"),
    [
        ({"change_category": "Other (specify)", "change_category__other": "Caching"}, "Caching"),
        ({"change_category": "Caching layer"}, "Caching layer"),
        ({"change_category": "Database"}, None),
        ({"change_category": "Other (specify)", "change_category__other": "database"}, None),
        ({"change_category__other": "x" * 501}, None),
        ({"change_category__other": "Caching", "description": "Mine"}, "Mine"),
    ],
    ids=["other-text", "custom-value", "option", "text-naming-one", "over-limit", "own-wins"],
)
def test_described_keeps_a_custom_category_text_as_the_description(
    answers: dict[str, str], description: str | None
) -> None:
    """The text typed for a custom category becomes the description; an option, a text naming
    a category, one over the limit, or a description already given add nothing."""
    from preflight_fsm.answers import described
    from preflight_fsm.flow import default_flow

    assert description == described(default_flow(), answers).get("description")
