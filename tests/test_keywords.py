"""Keyword shortcut (C4): words, never substrings; exactly one category or none."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import ClarificationMachine, default_flow
from preflight_fsm.keywords import KeywordIndex, words
from preflight_fsm.text import match_key

INDEX = KeywordIndex({c.name: c.keywords for c in default_flow().categories})


@pytest.mark.parametrize(
    ("intention", "category"),
    [
        ("Add OAuth login", "Authentication"),
        ("Switch to JWT tokens", "Authentication"),
        ("Authorisation rules for admins", "Authentication"),
        ("Add OAuth2 provider", "Authentication"),
        ("Migrate to Postgres", "Database"),
        ("Shard the DBs", "Database"),
        ("Rename MySQL tables", "Database"),
        ("New React components", "Frontend"),
        ("Front-end cleanup", "Frontend"),
        ("Polish the UI", "Frontend"),
        ("Version the APIs", "Backend"),
        ("Add a back end endpoint", "Backend"),
        ("Deploy with Docker", "Infra"),
        ("Speed up CI", "Infra"),
        ("Write a Dockerfile", "Infra"),
    ],
)
def test_intentions_naming_one_category(intention: str, category: str) -> None:
    """C4: these intentions name exactly one category, by word or word + "s"."""
    assert category == INDEX.only_category(intention)


@pytest.mark.parametrize(
    "intention",
    [
        "Show author names on posts",
        "Improve the feedback form",
        "Rebuild the build script",
        "Fix social sharing",
        "Raise capital requirements",
        "Authorship metadata",
        "Guide for new hires",
        "Circuit breaker for payments",
        "Dbase import",
        "",
    ],
)
def test_substrings_never_match(intention: str) -> None:
    """C4: "author", "feedback", "build", "social", "capital" and friends match nothing."""
    assert () == INDEX.categories(intention)


@pytest.mark.parametrize(
    ("intention", "matched"),
    [
        ("Add login API endpoint", ("Backend", "Authentication")),
        ("Store sessions in the DB behind the login", ("Database", "Authentication")),
        ("React UI for the deploy dashboard", ("Frontend", "Infra")),
    ],
)
def test_ambiguous_intentions_match_several_categories(
    intention: str, matched: tuple[str, ...]
) -> None:
    """C4: several categories matched -> no shortcut; they are reported in flow order."""
    assert matched == INDEX.categories(intention)
    assert INDEX.only_category(intention) is None
    assert "NeedCategory" == ClarificationMachine(intention).state


def test_words_split_on_every_non_alphanumeric_character() -> None:
    """C4: lower-cased, split on anything not a letter or digit (underscore included)."""
    assert ("front", "end", "oauth2", "db", "x") == words("Front-End/OAuth2_db x")


def test_several_word_keywords_match_in_a_row_only() -> None:
    """C4: "front end" matches the two words in a row, not apart."""
    assert ("Frontend",) == INDEX.categories("the front end")
    assert () == INDEX.categories("front of the queue, end of day")


def test_keyword_lists_are_data_a_flow_can_extend() -> None:
    """C4: keywords come from the flow; another list changes the matches."""
    index = KeywordIndex({"Payments": ("stripe", "payment")})
    assert "Payments" == index.only_category("Add Stripe payments")


_ALNUM_RUNS = re.compile(r"[^\W_]+")


@given(st.text(alphabet=st.sampled_from(" \t\n-_.,aZé1٣ßİ")) | st.text())
def test_words_are_the_alphanumeric_runs_of_the_match_key(text: str) -> None:
    """C4: splitting on spaces (the common case) finds exactly the pattern's words."""
    assert tuple(_ALNUM_RUNS.findall(match_key(text))) == words(text)


_KEYWORDS = {c.name: c.keywords for c in default_flow().categories}
_VOCABULARY = ("front", "end", "ends", "back", "oauth", "login", "logins", "the", "ui", "docker")


def _names(text_words: tuple[str, ...], keyword: str) -> bool:
    """The rule of C4 read plainly: the keyword's words in a row, the last optionally plus s."""
    *head, last = words(keyword)
    size = len(head) + 1
    return any(
        list(text_words[i : i + size - 1]) == head
        and text_words[i + size - 1] in (last, last + "s")
        for i in range(len(text_words) - size + 1)
    )


@given(st.lists(st.sampled_from(_VOCABULARY), max_size=8))
def test_the_index_finds_what_a_plain_scan_of_every_keyword_finds(chosen: list[str]) -> None:
    """C4: the index's lookups and early return find exactly the categories the rule names."""
    text_words = tuple(chosen)
    expected = tuple(
        name for name, keywords in _KEYWORDS.items() if any(_names(text_words, k) for k in keywords)
    )
    assert expected == INDEX.categories(" ".join(chosen))
