"""The answer page's links (web/links.py): capabilities for one turn."""

from __future__ import annotations

import base64

import pytest

from preflight_fsm.web.links import LinkBook


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_carries_at_least_128_random_bits() -> None:
    token = LinkBook().issue("s", 1, 1)
    assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) * 8 >= 128


def test_two_links_for_the_same_turn_differ() -> None:
    book = LinkBook()
    assert book.issue("s", 1, 1) != book.issue("s", 1, 1)


def test_a_link_grants_its_session_version_and_turn() -> None:
    book = LinkBook()
    grant = book.find(book.issue("s", 3, 2, principal="ada"))
    assert ("s", 3, 2, "ada") == (grant.session_id, grant.version, grant.turn, grant.principal)  # type: ignore[union-attr]


def test_a_link_never_issued_is_unknown() -> None:
    assert "unknown" == LinkBook().find("x" * 43)


def test_a_spent_link_is_used() -> None:
    book = LinkBook()
    token = book.issue("s", 1, 1)
    assert book.spend(token)
    assert "used" == book.find(token)


def test_a_link_is_spent_only_once() -> None:
    book = LinkBook()
    token = book.issue("s", 1, 1)
    book.spend(token)
    assert not book.spend(token)


def test_a_link_past_its_lifetime_is_expired() -> None:
    clock = Clock()
    book = LinkBook(60, clock=clock)
    token = book.issue("s", 1, 1)
    clock.now += 60
    assert "expired" == book.find(token)


def test_a_link_within_its_lifetime_is_live() -> None:
    clock = Clock()
    book = LinkBook(60, clock=clock)
    token = book.issue("s", 1, 1)
    clock.now += 59
    assert "s" == book.find(token).session_id  # type: ignore[union-attr]


def test_past_the_bound_the_oldest_link_is_dropped() -> None:
    book = LinkBook(max_links=2)
    first = book.issue("a", 1, 1)
    book.issue("b", 1, 1)
    book.issue("c", 1, 1)
    assert "unknown" == book.find(first)


def test_a_lifetime_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        LinkBook(0)
