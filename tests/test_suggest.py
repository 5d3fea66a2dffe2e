"""suggest.py: the option or command a person nearly typed, and nothing for a distinct text."""

from __future__ import annotations

import pytest

from preflight_fsm.suggest import nearest

AUTH = ("OAuth", "Email/Password", "Magic Link")
CATEGORIES = ("Frontend", "Backend", "Database", "Authentication", "Infra")


@pytest.mark.parametrize(
    ("typed", "names", "expected"),
    [
        ("Databse", CATEGORIES, "Database"),
        ("OAthAth", AUTH, "OAuth"),
        ("magic lnk", AUTH, "Magic Link"),
        ("chaat", ("chat", "start", "answer"), "chat"),
    ],
    ids=["dropped-letter", "garbled", "case-and-typo", "command"],
)
def test_a_near_miss_gives_the_name_as_written(
    typed: str, names: tuple[str, ...], expected: str
) -> None:
    """A near miss gives the name it nearly spells, as the flow writes it."""
    assert expected == nearest(typed, names)


@pytest.mark.parametrize(
    "typed",
    ["OAuth", "  oauth ", "Passkeys", "", "Caching layer with Redis"],
    ids=["exact", "case-and-spaces", "another-answer", "empty", "a-sentence"],
)
def test_an_exact_or_distinct_text_gives_nothing(typed: str) -> None:
    """An exact name (any case, any spacing) or a clearly different text suggests nothing."""
    assert nearest(typed, AUTH) is None
