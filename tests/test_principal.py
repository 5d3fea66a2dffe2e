"""The principal rule (principal.py): a caller's, owner's or person's name is clean or refused."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_fsm import ClarificationMachine, InvalidAnswers
from preflight_fsm.principal import MAX_PRINCIPAL, check_principal, principal_problem


@pytest.mark.parametrize(
    "name", ["alice", "ci-bot@example.org", "Zoë Durand", "山田太郎", "auth0|5f1c"], ids=repr
)
def test_a_clean_name_is_a_principal(name: str) -> None:
    """C5: one line of visible text is taken as it is."""
    assert name == check_principal(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        " alice",
        "alice\n",
        "ali\nce",
        "ali\tce",
        "alice\u202e",
        "al\u200bice",
        "\u041eAuth",  # a Cyrillic O before Latin letters: a look-alike word
        "Zoe\u0308",  # not in NFC
        "a" * (MAX_PRINCIPAL + 1),
        7,
        ["alice"],
    ],
    ids=repr,
)
def test_a_name_that_could_deceive_or_break_a_file_is_refused(name: Any) -> None:
    """C5: invisible, control, look-alike, unnormalised, padded, overlong or non-text names are
    refused, never cleaned, with a problem that says what is wrong."""
    assert principal_problem(name) is not None


def test_the_refusal_names_the_field_it_was_given_as() -> None:
    """C5: the InvalidAnswers feedback names ``owner`` when the owner was refused."""
    with pytest.raises(InvalidAnswers) as info:
        ClarificationMachine("Add OAuth login", owner="bob\u202e")
    assert "owner" == info.value.feedback["issues"]["invalid"][0]["field"]


def test_none_means_unauthenticated() -> None:
    """C9: no principal is recorded as None."""
    assert check_principal(None) is None
